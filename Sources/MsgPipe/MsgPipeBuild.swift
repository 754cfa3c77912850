internal import CBuildInfo

/// The library's version and the commit it was built from, as `msgpipe --version` prints them.
///
/// ```swift
/// logger.info("msgpipe \(MsgPipeBuild.versionLine)")   // "msgpipe 0.1.0 (abc1234)"
/// ```
public enum MsgPipeBuild {
    /// The package version; Scripts/package.sh names the Debian package after it.
    public static let version = "0.1.0"

    /// The commit the build was given (MSGPIPE_COMMIT; Scripts/package.sh sets `git describe --always --dirty`),
    /// or "unknown".
    public static var commit: String { String(cString: mp_build_commit()) }

    /// `0.1.0 (abc1234)`.
    public static var versionLine: String { "\(version) (\(commit))" }
}
