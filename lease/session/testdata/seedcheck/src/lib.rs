pub mod models;
pub mod lease;
