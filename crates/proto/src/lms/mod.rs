//! lms
