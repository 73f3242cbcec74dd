fn main() {
    eprintln!("wirebench {}: the command line is not built yet; see README.md", env!("CARGO_PKG_VERSION"));
    std::process::exit(2);
}
