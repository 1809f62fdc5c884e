import CofferKit
import FinanceCore
import Foundation
import VaultBackup
import VaultCrypto
import VaultStore

/// The exit codes of `coffer` (sysexits), documented in Specs/cli.md.
public enum ExitStatus: Int32, Sendable {
    case ok = 0
    case failure = 1
    /// Invalid usage or input; nothing was written.
    case invalidInput = 64
    /// A damaged or tampered vault or archive.
    case damaged = 65
    /// The vault or archive does not exist.
    case notFound = 66
    /// An output (backup archive, export) cannot be created: its folder is missing, not
    /// writable, or read-only.
    case cannotCreate = 73
    /// Writing or reading back an output failed: an I/O error, a full disk.
    case ioError = 74
    /// Wrong passphrase or recovery key, no session, or session expired.
    case noPermission = 77
    /// The configuration file is unreadable, not TOML, or holds an unknown or mistyped setting.
    case configuration = 78
}

/// The one error type of CofferCLI: a message for the user, the exit status, and the next
/// command to try when there is one.
public struct CLIError: Error, LocalizedError, Sendable {
    public let status: ExitStatus
    public let message: String
    public let hint: String?
    public let details: [String]

    public init(_ status: ExitStatus, _ message: String, hint: String? = nil, details: [String] = []) {
        self.status = status
        self.message = message
        self.hint = hint
        self.details = details
    }

    public var errorDescription: String? { message }

    /// Whether `error` comes from Coffer's own layers (and so maps onto an exit code here),
    /// rather than from argument parsing.
    static func maps(_ error: Error) -> Bool {
        error is CLIError || error is CofferError || error is VaultError || error is BackupError
            || error is FinanceError || error is CryptoError
    }

    /// Maps lower layers' errors onto exit codes and adds what to do next. The lower layers
    /// state facts; commands, environment variables and shell lines are worded only here.
    public init(_ error: Error) {
        switch error {
        case let error as CLIError:
            self = error
        case let error as CofferError:
            self.init(cofferError: error)
        case let error as VaultError:
            self.init(vaultError: error)
        case let error as BackupError:
            let status: ExitStatus
            switch error.code {
            case .notFound: status = .notFound
            case .invalidRequest: status = .invalidInput
            case .damaged, .untrusted, .unsupported: status = .damaged
            default: status = .failure
            }
            self.init(status, error.errorDescription ?? "\(error.code)")
        case let error as FinanceError:
            let status: ExitStatus =
                error.code == .invalidRecord ? .damaged : (error.code == .overflow ? .failure : .invalidInput)
            self.init(
                status, error.errorDescription ?? "\(error.code)",
                hint: error.code == .overpayment
                    ? "Nothing was changed. See what is owed: coffer invoice show INV-NNNN"
                    : status == .invalidInput ? "Nothing was changed." : nil)
        case let error as CryptoError:
            self.init(
                error.code == .invalidPassphrase ? .invalidInput : .failure, error.errorDescription ?? "\(error.code)")
        default:
            self.init(.failure, error.localizedDescription)
        }
    }

    /// CofferKit states what went wrong; here it gets its exit code and the command to try next.
    private init(cofferError error: CofferError) {
        let kind = error.kind ?? "record"
        switch error.code {
        case .noMatch:
            let hint: String?
            if let next = Self.listCommands[kind] {
                hint = next
            } else if error.candidates.isEmpty {
                hint = Self.addCommands[kind].map { "Add one with: \($0)" }
            } else {
                let plural = Ledger.plural(kind)
                let all =
                    "\(plural.prefix(1).uppercased() + plural.dropFirst()): \(error.candidates.joined(separator: ", "))"
                // The nearest name, as for a mistyped command (`grocceries` → Groceries).
                let lowered = Dictionary(error.candidates.map { ($0.lowercased(), $0) }) { first, _ in first }
                hint =
                    CommandWords.closest(to: error.wanted ?? "", among: Array(lowered.keys)).flatMap { lowered[$0] }
                    .map { "Did you mean '\($0)'? \(all)" } ?? all
            }
            self.init(.invalidInput, "\(error.message) Nothing was changed.", hint: hint)
        case .ambiguous:
            self.init(
                .invalidInput, "\(error.message) Nothing was changed.",
                hint: Self.listCommands[kind] ?? "Type more of the name.")
        case .alreadyExists, .inUse, .unchanged, .closed, .invalidInput:
            self.init(.invalidInput, "\(error.message) Nothing was changed.", hint: Self.nextSteps(error))
        case .damaged: self.init(.damaged, error.message)
        case .conflict:
            self.init(.failure, "\(error.message) Nothing was changed.", hint: "See what changed: coffer log")
        case .fileNotFound: self.init(.notFound, error.message)
        case .wrongCredential: self.init(.noPermission, error.message)
        case .rolledBack: self.init(.damaged, error.message)
        case .keysChanged:
            self.init(
                .noPermission, error.message,
                hint:
                    "Run coffer sync with the passphrase (prompt, --passphrase-file or COFFER_PASSPHRASE) to take on the new keys."
            )
        default: self.init(.failure, error.message)
        }
    }

    /// How to add a record of each kind, for "no such …" errors on an empty list.
    static let addCommands = [
        "account": "coffer account add NAME --category CATEGORY",
        "category": "coffer category add NAME --type needs|wants|savings",
        "income source": "coffer income add NAME AMOUNT --frequency monthly",
        "goal": "coffer goal add NAME --target AMOUNT",
        "client": "coffer client add NAME --terms 30",
        "rule set": "coffer import rules add NAME --match TEXT --category CATEGORY",
        "sync folder": "coffer sync init DIR (or, on a new machine: coffer device join DIR)",
        "note": "coffer note add TITLE --stdin (or in $EDITOR, without --stdin)",
    ]

    /// Kinds named by an id or number rather than a name: where to see them.
    static let listCommands = [
        "invoice": "List them with: coffer invoices",
        "transaction": "Ids are shown by: coffer transaction list",
        "conflict": "List them with: coffer sync conflicts",
        "device": "List them with: coffer device list",
    ]

    /// What to do after a refused change, when there is something better than "try again".
    static func nextSteps(_ error: CofferError) -> String? {
        let name = error.candidates.first ?? "NAME"
        switch (error.code, error.kind) {
        case (.alreadyExists, "account"): return "Choose another name, or update it: coffer update \"\(name)\" AMOUNT"
        case (.closed, "account"): return "Reopen it first: coffer account reopen \"\(name)\""
        case (.closed, "sync folder"):
            return
                "Start a new folder from this device: coffer sync init NEWDIR --replace-folder, then on each other device: coffer device join NEWDIR --vault NEWPATH"
        case (.alreadyExists, "sync folder"):
            return "Sync it with: coffer sync (to move to another folder: coffer sync init DIR --replace-folder)"
        case (.inUse, "goal"): return "Delete them first (coffer transaction list), or keep the goal."
        case (.invalidInput, "category"): return "Income comes from a source: --source NAME"
        case (.invalidInput, "income source"): return "Spending goes in a category: --category NAME"
        default: return nil
        }
    }

    private init(vaultError error: VaultError) {
        let message = error.errorDescription ?? error.code.rawValue
        let details = error.problems.map(\.description)
        switch error.code {
        case .notFound:
            self.init(
                .notFound, message,
                hint: "Create one with `coffer init`, or point at yours with --vault PATH or COFFER_VAULT.")
        case .alreadyExists:
            self.init(.invalidInput, message, hint: "Choose another path with --vault PATH.")
        case .notAVault, .headerDamaged, .headerTampered, .integrityFailure, .unsupportedVersion, .unsafeParameters,
            .schemaTampered:
            self.init(
                .damaged, message,
                hint: error.code == .unsupportedVersion
                    ? nil
                    : "Do not write to this vault. Restore it from a backup, and keep this copy for inspection.",
                details: details)
        case .rolledBack:
            self.init(
                .damaged, message,
                hint:
                    "If you restored or copied this file back on purpose, run the command again with --accept-rollback. Otherwise keep this copy for inspection and restore from a backup."
            )
        case .passphraseRequired:
            self.init(
                .noPermission, message,
                hint:
                    "Give the passphrase (prompt, --passphrase-file or --passphrase-command); a session never changes keys."
            )
        case .wrongPassphrase:
            self.init(
                .noPermission, message,
                hint:
                    "Try again, or open it with --recovery-key (typed) or --recovery-key-file if you set up a recovery key."
            )
        case .sessionNotFound, .sessionExpired, .sessionInvalid:
            self.init(
                .noPermission, message,
                hint: "Unlock again for a new session token (COFFER_SESSION): eval \"$(coffer unlock)\"")
        case .wrongRecoveryKey, .noRecoveryKey:
            self.init(.noPermission, message)
        case .busy:
            // The words coffer has always printed; VaultStore states only "another process".
            self.init(
                .failure,
                "The vault is busy: another coffer process held it for over \(Int(Vault.busyTimeout)) seconds. Nothing was changed; try again."
            )
        default:
            self.init(.failure, message)
        }
    }
}

extension CLIError {
    /// Runs an import step: a refusal from CofferKit says that nothing was imported, with
    /// `hint` worded for this command.
    static func importing<T>(_ body: () throws -> T, hint: (CofferError) -> String?) throws -> T {
        do {
            return try body()
        } catch let error as CofferError where error.code != .damaged && error.code != .failed {
            throw CLIError(
                .invalidInput, "\(error.message) Nothing was imported.", hint: hint(error) ?? CLIError(error).hint)
        } catch let error as FinanceError where error.code != .invalidRecord {
            throw CLIError(.invalidInput, "\(error.errorDescription ?? "Invalid input.") Nothing was imported.")
        }
    }
}
