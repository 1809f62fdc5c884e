import Foundation

/// The one error type of VaultBackup. Messages say what was proved wrong about an archive and
/// never contain record contents or keys.
public struct BackupError: Error, LocalizedError, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// Not an archive, truncated, altered, spliced, or failing its signature.
        public static let damaged = Code("damaged")
        /// Signed by a key other than the expected one, or not signed at all.
        public static let untrusted = Code("untrusted")
        /// A newer format, or a critical feature this reader does not know.
        public static let unsupported = Code("unsupported")
        /// The archive or its signature file does not exist.
        public static let notFound = Code("notFound")
        /// Writing failed (disk full, permissions); nothing with a final name was left behind.
        public static let writeFailed = Code("writeFailed")
        /// The linked liblzma is a known-compromised release.
        public static let unsafeLibrary = Code("unsafeLibrary")
        /// Invalid options (e.g. prune rules that keep nothing).
        public static let invalidRequest = Code("invalidRequest")
    }

    public let code: Code
    public let errorDescription: String?

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.errorDescription = message
    }
}
