import Foundation

/// The one error type of VaultCrypto.
///
/// Messages name the operation that failed and never include key material, passphrases or
/// plaintext, so they are safe to print and to log.
public struct CryptoError: Error, LocalizedError, Equatable, Sendable {
    /// What went wrong. Extensible: new codes can be added without breaking `switch`-free callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// libsodium could not be initialised (no entropy source, or a broken build).
        public static let initialisationFailed = Code("initialisationFailed")
        /// An authenticated ciphertext or stream chunk did not verify: wrong key, or altered bytes.
        public static let authenticationFailed = Code("authenticationFailed")
        /// A key, nonce, salt or signature had the wrong length.
        public static let invalidLength = Code("invalidLength")
        /// Key-derivation parameters outside the accepted range (possibly a crafted file).
        public static let unsafeParameters = Code("unsafeParameters")
        /// Argon2id could not run, usually because the memory it needs is not available.
        public static let keyDerivationFailed = Code("keyDerivationFailed")
        /// A passphrase that cannot be used (empty, or not valid text).
        public static let invalidPassphrase = Code("invalidPassphrase")
        /// Padding bytes that do not follow the ISO/IEC 7816-4 rule.
        public static let invalidPadding = Code("invalidPadding")
        /// A secret-stream was used after its final chunk, or ended without one.
        public static let streamState = Code("streamState")
        /// A libsodium call failed where it normally cannot.
        public static let operationFailed = Code("operationFailed")
    }

    public let code: Code
    public let errorDescription: String?

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.errorDescription = message
    }

    /// Errors compare by code so tests and callers can match on what failed.
    public static func == (lhs: CryptoError, rhs: CryptoError) -> Bool { lhs.code == rhs.code }
}
