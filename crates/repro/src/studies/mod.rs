pub mod demo;
pub mod segovia;
