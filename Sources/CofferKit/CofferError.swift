import Foundation

/// The one error type of CofferKit. Messages state facts ("An account called 'Rent' already
/// exists."); what to do next is the front end's to word, from the code and the facts carried
/// here (`kind`, `candidates`), so a phone app and the CLI can each say it their own way.
/// Errors of the layers below (VaultError, BackupError, FinanceError, CryptoError) pass through
/// unchanged: they already carry their own codes.
public struct CofferError: Error, LocalizedError, Sendable {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }
        public var description: String { name }

        /// A value the user gave breaks a rule (an amount of zero, a date before another).
        public static let invalidInput = Code("invalidInput")
        /// No record of `kind` is called that; `candidates` lists the ones there are.
        public static let noMatch = Code("noMatch")
        /// A name prefix fits several records; `candidates` lists them.
        public static let ambiguous = Code("ambiguous")
        /// A record of `kind` with that name already exists.
        public static let alreadyExists = Code("alreadyExists")
        /// The change would leave other records pointing at nothing (a client with invoices).
        public static let inUse = Code("inUse")
        /// The change asks for the state something is already in (closing a closed account).
        public static let unchanged = Code("unchanged")
        /// The record is closed to this change (a value on a closed account, closing it twice).
        public static let closed = Code("closed")
        /// A stored record or archive cannot be read.
        public static let damaged = Code("damaged")
        /// A file the operation needs is not there.
        public static let fileNotFound = Code("fileNotFound")
        /// The operation could not finish; nothing it promised was left half done.
        public static let failed = Code("failed")
        /// The archive's credential does not open it.
        public static let wrongCredential = Code("wrongCredential")
        /// The vault is older than a state it is known to have reached (a rolled-back copy).
        public static let rolledBack = Code("rolledBack")
        /// Another device replaced the vault's keys (a removed device, a rekey): this copy takes
        /// on the new ones with the passphrase (`SyncService.adoptNewKeys`).
        public static let keysChanged = Code("keysChanged")
        /// Records changed since the state the operation was based on (a redo after a sync).
        public static let conflict = Code("conflict")
    }

    public let code: Code
    public let message: String
    /// What sort of record the error is about: "account", "category", "income source" …
    public let kind: String?
    /// The names the user could have meant.
    public let candidates: [String]
    /// What the user typed, when no name matched it (the front end can suggest the nearest).
    public let wanted: String?

    public init(
        _ code: Code, _ message: String, kind: String? = nil, candidates: [String] = [], wanted: String? = nil
    ) {
        self.code = code
        self.message = message
        self.kind = kind
        self.candidates = candidates
        self.wanted = wanted
    }

    public var errorDescription: String? { message }
}
