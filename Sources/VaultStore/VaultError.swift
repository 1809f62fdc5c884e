import Foundation

/// The one error type of VaultStore.
///
/// Messages say what failed and what to do, and never contain a passphrase, key or record
/// content. `code` maps one-to-one onto the CLI's exit codes (see Specs/cli.md).
public struct VaultError: Error, LocalizedError, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// No vault file at the path.
        public static let notFound = Code("notFound")
        /// A vault already exists where one was to be created.
        public static let alreadyExists = Code("alreadyExists")
        /// The file is not a Coffer vault (not SQLite, or no Coffer header).
        public static let notAVault = Code("notAVault")
        /// The header fails its checksum or cannot be parsed.
        public static let headerDamaged = Code("headerDamaged")
        /// The header checksum is right but its keyed MAC is not: someone edited it.
        public static let headerTampered = Code("headerTampered")
        /// Records, manifest or commit record fail verification; `problems` names each.
        public static let integrityFailure = Code("integrityFailure")
        /// The passphrase does not unwrap the master key.
        public static let wrongPassphrase = Code("wrongPassphrase")
        /// The recovery key is malformed, or does not unwrap the master key.
        public static let wrongRecoveryKey = Code("wrongRecoveryKey")
        /// The vault has no recovery key slot.
        public static let noRecoveryKey = Code("noRecoveryKey")
        /// No session file for the token (locked, or never unlocked on this machine).
        public static let sessionNotFound = Code("sessionNotFound")
        /// The session's time is up.
        public static let sessionExpired = Code("sessionExpired")
        /// The token is malformed, the session file altered, or it belongs to another vault or key.
        public static let sessionInvalid = Code("sessionInvalid")
        /// A newer format or schema than this build understands.
        public static let unsupportedVersion = Code("unsupportedVersion")
        /// Argon2id parameters in the file are outside the safe range.
        public static let unsafeParameters = Code("unsafeParameters")
        /// A record to delete does not exist.
        public static let recordNotFound = Code("recordNotFound")
        /// A bulk load gives one id twice, or an id the vault already holds.
        public static let duplicateRecord = Code("duplicateRecord")
        /// The session directory is not private to this user.
        public static let insecureDirectory = Code("insecureDirectory")
        /// The file is older than the high-water mark kept on this machine, or a different state
        /// at the same counter (a fork). Refused unless the rollback is accepted.
        public static let rolledBack = Code("rolledBack")
        /// The SQLite schema holds objects Coffer did not make (a trigger, a view, a column).
        public static let schemaTampered = Code("schemaTampered")
        /// A key change needs the master key, which a session does not hold, or the passphrase.
        public static let passphraseRequired = Code("passphraseRequired")
        /// Another process held the vault for writing longer than `Vault.busyTimeout`; nothing
        /// was changed, and trying again may succeed.
        public static let busy = Code("busy")
        /// SQLite or the file system failed (disk full, permissions).
        public static let storageFailure = Code("storageFailure")
    }

    public let code: Code
    /// For `.integrityFailure`: every problem found, each naming the record or structure.
    public let problems: [IntegrityProblem]
    private let message: String

    public init(_ code: Code, _ message: String, problems: [IntegrityProblem] = []) {
        self.code = code
        self.message = message
        self.problems = problems
    }

    public var errorDescription: String? { message }
}

/// One thing `verify` found wrong, naming the record it concerns when there is one.
public struct IntegrityProblem: Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        /// The ciphertext did not authenticate: altered bytes, or moved from another record or vault.
        case recordDamaged
        /// A record the commit lists is not in the file.
        case recordMissing
        /// A record is in the file that the commit does not list.
        case recordUnexpected
        /// The same record id appears more than once.
        case recordDuplicated
        /// The record is authentic but not the version the commit lists: an older copy put back.
        case recordStale
        /// The manifest or commit record itself is damaged or missing.
        case structureDamaged
    }

    public let kind: Kind
    public let recordID: RecordID?
    public let detail: String

    public init(kind: Kind, recordID: RecordID?, detail: String) {
        self.kind = kind
        self.recordID = recordID
        self.detail = detail
    }

    public var description: String {
        if let recordID { return "record \(recordID.hex): \(detail)" }
        return detail
    }
}
