pub mod demo;
pub mod lms;
pub mod prmp;
pub mod segovia;
