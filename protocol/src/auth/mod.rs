//! Authentication plugins, one file each.
