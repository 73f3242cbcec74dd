//! Tests that start machinery beyond a server: sshd for the shard scripts,
//! podman for the container image (tests/README.md).

#[path = "../common/mod.rs"]
mod common;

mod image;
mod shards;
