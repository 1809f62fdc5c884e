/// The one list of record kinds: a payload's first byte. The numbers are stored in every vault
/// and archive, so they are pinned here and never reused; a new kind takes the next number, a
/// case in `FinanceRecord`, a file in Kinds/ and a row in Specs/record-payloads.md
/// (`PayloadPinTests` fails until its bytes are pinned too).
public enum RecordKind: UInt8, CaseIterable, Sendable {
    case settings = 1
    case account = 2
    case update = 3
    case categoryRate = 4
    case change = 5
    case backupTarget = 6
    case backupState = 7
    case budgetCategory = 8
    case incomeSource = 9
    case transaction = 10
    case savingsGoal = 11
    case client = 12
    case invoice = 13
    case invoiceCounter = 14
    case categoryRuleSet = 15
    case syncState = 16
    case syncIndex = 17
    case syncConflict = 18
    case undoneChange = 19
    case importProfile = 20
    case note = 21
    case recurring = 22
    case invoiceSender = 23
    case summary = 24

    /// The payload version this kind is written with today (a payload's second byte). Raising it
    /// needs a decoder for the new version beside the old ones, in the kind's file in Kinds/.
    public var currentVersion: UInt8 {
        switch self {
        case .settings: 2
        case .account: 1
        case .update: 2
        case .categoryRate: 1
        case .change: 1
        case .backupTarget: 1
        case .backupState: 1
        case .budgetCategory: 2
        case .incomeSource: 2
        case .transaction: 3
        case .savingsGoal: 2
        case .client: 2
        case .invoice: 3
        case .invoiceCounter: 1
        case .categoryRuleSet: 2
        case .syncState: 2
        case .syncIndex: 1
        case .syncConflict: 1
        case .undoneChange: 1
        case .importProfile: 3
        case .note: 1
        case .recurring: 1
        case .invoiceSender: 1
        case .summary: 1
        }
    }

    /// Kinds that describe this copy of the vault rather than the finances: its backups and its
    /// place in a sync folder, and figures derived from its records. Sync never publishes them, archives and exports leave them out.
    public var isLocal: Bool {
        self == .backupState || self == .syncState || self == .syncIndex || self == .syncConflict
            || self == .undoneChange || self == .summary
    }
}
