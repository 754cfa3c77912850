import UnixSignals

extension PipeKeys {
    /// With a keyring: reloads its file on every SIGHUP, closing the sessions of revoked keys, and tells
    /// `onReload` the keys revoked, or why the file was refused (the keys then stay as they were). SIGHUP is
    /// caught from the return on (before, and without a keyring, it keeps its default action: terminate);
    /// reloads run one after the other. Call it once per process: a signal has one handler.
    ///
    /// ```swift
    /// await keys.reloadOnHangup { _, outcome in print(outcome) }
    /// ```
    public func reloadOnHangup(
        onReload: @escaping @Sendable (AuthorizedKeyring, Result<[AuthorizedKeys.Entry], KeyFileError>) -> Void
    ) async {
        guard case let .authorized(_, keyring) = self else { return }
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        Task {
            for await _ in hangups {
                do throws(KeyFileError) {
                    onReload(keyring, .success(try await keyring.reload()))
                } catch {
                    onReload(keyring, .failure(error))
                }
            }
        }
    }
}
