public import Exchange

extension AuthorizedKeyring {
    /// The keys of the file at `path`, checked as ``KeyFiles/authorizedKeys(at:)`` does; ``reload()`` reads it
    /// again.
    ///
    /// ```swift
    /// let keyring = try AuthorizedKeyring(path: "/etc/msgpipe/authorized_keys")
    /// ```
    public convenience init(path: String) throws(KeyFileError) {
        try self.init(path: path, reading: KeyFiles.authorizedKeys(at:))
    }
}
