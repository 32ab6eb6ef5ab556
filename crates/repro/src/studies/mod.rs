pub mod demo;
pub mod lms;
pub mod paul;
pub mod prmp;
pub mod segovia;
pub mod xtp;
pub mod xtp_net;
