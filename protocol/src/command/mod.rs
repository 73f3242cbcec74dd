//! Client commands: encoders for every command packet.
