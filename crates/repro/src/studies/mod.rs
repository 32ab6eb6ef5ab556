pub mod demo;
pub mod lms;
pub mod segovia;
pub mod xtp;
pub mod xtp_net;
