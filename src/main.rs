fn main() {
    std::process::exit(optc::cli::main());
}
