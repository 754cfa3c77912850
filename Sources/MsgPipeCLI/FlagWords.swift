/// The library names a remedy by its setting ("use the kernel backend", "check the profile"); the CLI names the
/// option that sets it. ``flagged(_:)`` turns one into the other for every error and note the CLI prints, so
/// the library's texts stay free of CLI flags and the user still reads the flag to type.
enum FlagWords {
    /// Library phrase → what `msgpipe` prints instead. Each entry is tested against the library text it
    /// rewrites (`FlagWordsTests`), so a reworded library message cannot slip past the table unnoticed.
    static let table: KeyValuePairs<String, String> = [
        "or use the kernel backend": "or use --backend kernel",
        "and use the kernel backend": "and use --backend kernel",
        "a PHY preference needs the kernel backend": "a PHY preference needs --backend kernel",
        "; the kernel backend with CAP_NET_ADMIN": "; --backend kernel with CAP_NET_ADMIN",
        "and the adapter asked for": "and --adapter",
        "check the profile (its service UUID)": "check --profile",
        "check the profile (its characteristic UUIDs)": "check --profile",
        "or use the msgpipe format": "or use --format msgpipe",
        "does not speak the format ": "does not speak --format ",
        "(a scan lists it) or connect by its address": "(msgpipe scan) or pass its address with --to",
        "(a bond directory keeps bonds across restarts)": "(msgpipe keeps bonds across restarts with --bonds DIR)",
        "another state directory": "another --state directory",
        "is in use by another server;": "is in use by another msgpipe serve;",
        "a profile is msgpipe, nus or custom": "--profile must be msgpipe, nus or custom",
        "a custom profile needs": "--profile custom: needs",
        "a custom profile's ": "--profile custom: ",
    ]

    /// `text` with each library phrase of ``table`` replaced by its CLI words.
    static func flagged(_ text: String) -> String {
        table.reduce(text) { text, entry in text.contains(entry.key) ? text.replacing(entry.key, with: entry.value) : text }
    }
}

extension DefaultStringInterpolation {
    /// `"\(cli: error)"`: the error's description in the CLI's words (``FlagWords``).
    mutating func appendInterpolation(cli error: any Error) {
        appendLiteral(FlagWords.flagged(String(describing: error)))
    }
}

/// An error that reached `main`, printed in the CLI's words; the exit code is the one ArgumentParser gives any
/// error of ours (1).
struct FlaggedError: Error, CustomStringConvertible {
    let description: String
}
