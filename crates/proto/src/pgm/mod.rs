//! pgm
