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
    /// Wrong passphrase or recovery key, no session, or session expired.
    case noPermission = 77
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

    /// Maps lower layers' errors onto exit codes and adds what to do next. The lower layers
    /// state facts; commands, environment variables and shell lines are worded only here.
    public init(_ error: Error) {
        switch error {
        case let error as CLIError:
            self = error
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
            let status: ExitStatus = error.code == .invalidRecord ? .damaged : (error.code == .overflow ? .failure : .invalidInput)
            self.init(status, error.errorDescription ?? "\(error.code)")
        case let error as CryptoError:
            self.init(error.code == .invalidPassphrase ? .invalidInput : .failure, error.errorDescription ?? "\(error.code)")
        default:
            self.init(.failure, error.localizedDescription)
        }
    }

    private init(vaultError error: VaultError) {
        let message = error.errorDescription ?? error.code.rawValue
        let details = error.problems.map(\.description)
        switch error.code {
        case .notFound:
            self.init(.notFound, message, hint: "Create one with `coffer init`, or point at yours with --vault PATH or COFFER_VAULT.")
        case .alreadyExists:
            self.init(.invalidInput, message, hint: "Choose another path with --vault PATH.")
        case .notAVault, .headerDamaged, .headerTampered, .integrityFailure, .unsupportedVersion, .unsafeParameters, .schemaTampered:
            self.init(.damaged, message, hint: error.code == .unsupportedVersion ? nil
                      : "Do not write to this vault. Restore it from a backup, and keep this copy for inspection.", details: details)
        case .rolledBack:
            self.init(.damaged, message, hint: "If you restored or copied this file back on purpose, run the command again with --accept-rollback. Otherwise keep this copy for inspection and restore from a backup.")
        case .passphraseRequired:
            self.init(.noPermission, message, hint: "Give the passphrase (prompt, --passphrase-file or --passphrase-command); a session never changes keys.")
        case .wrongPassphrase:
            self.init(.noPermission, message, hint: "Try again, or open it with --recovery-key-file if you set up a recovery key.")
        case .sessionNotFound, .sessionExpired, .sessionInvalid:
            self.init(.noPermission, message, hint: "Unlock again for a new session token (COFFER_SESSION): eval \"$(coffer unlock)\"")
        case .wrongRecoveryKey, .noRecoveryKey:
            self.init(.noPermission, message)
        case .busy:
            // The words coffer has always printed; VaultStore states only "another process".
            self.init(.failure, "The vault is busy: another coffer process held it for over \(Int(Vault.busyTimeout)) seconds. Nothing was changed; try again.")
        default:
            self.init(.failure, message)
        }
    }
}
