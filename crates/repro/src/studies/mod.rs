pub mod demo;
pub mod lms;
pub mod segovia;
