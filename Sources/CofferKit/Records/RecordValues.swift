import FinanceCore
import Foundation

// The values CofferKit stores beside the finance model: the vault's settings, its change log and
// backup bookkeeping. Their payloads are in Kinds/, one file per record kind.

/// Vault settings: one record per vault.
public struct VaultSettings: Hashable, Sendable {
    public var currency: Currency
    /// Whether unpaid sent invoices count in net worth ("Invoices receivable"); added in v2.
    public var includeReceivables: Bool
    public init(currency: Currency, includeReceivables: Bool = true) {
        self.currency = currency
        self.includeReceivables = includeReceivables
    }
}

/// The last invoice number issued. Written outside the change log, so `undo` never makes a
/// number available again: invoice numbers are never reused.
public struct InvoiceCounter: Hashable, Sendable {
    public var lastNumber: Int
    public init(lastNumber: Int) { self.lastNumber = lastNumber }
}

/// A growth rate set for a whole category (`coffer growth set Savings 3%`).
public struct CategoryRate: Hashable, Sendable {
    public var category: String
    public var rate: GrowthRate
    public init(category: String, rate: GrowthRate) {
        self.category = category
        self.rate = rate
    }
}

/// One entry of the change log: what a command changed, with the previous payload of every
/// record it touched, so `undo` can put them back exactly.
public struct ChangeEntry: Hashable, Sendable {
    public struct Before: Hashable, Sendable {
        public let recordID: UUID
        /// The encoded record before the change; nil when the change created it.
        public let payload: [UInt8]?
        public init(recordID: UUID, payload: [UInt8]?) {
            self.recordID = recordID
            self.payload = payload
        }
    }

    public let sequence: UInt64
    /// Seconds since 1970, when the change was made.
    public let timestamp: Int64
    /// What a person would call the change: "Updated Savings to £1,200.00".
    public let summary: String
    public let before: [Before]

    public init(sequence: UInt64, timestamp: Int64, summary: String, before: [Before]) {
        self.sequence = sequence
        self.timestamp = timestamp
        self.summary = summary
        self.before = before
    }
}

/// A change that `undo` took back, kept so that `redo` can make it again: the entry as it was,
/// and the payloads its records had after it (the undo restored the entry's `before`).
public struct UndoneChange: Hashable, Sendable {
    public let change: ChangeEntry
    /// Higher for a later undo: redo takes the highest first.
    public let order: UInt64
    public let after: [ChangeEntry.Before]

    public init(change: ChangeEntry, order: UInt64, after: [ChangeEntry.Before]) {
        self.change = change
        self.order = order
        self.after = after
    }
}

/// What one bank's statements need to import (`coffer import profile`): every setting optional,
/// so a profile holds what was given and a flag given with it wins.
public struct ImportProfile: Hashable, Sendable {
    public let id: UUID
    public var name: String
    public var destination: StatementColumns.Destination?
    public var account: String?
    public var ruleSet: String?
    public var dateColumn: String?
    public var amountColumn: String?
    public var debitColumn: String?
    public var creditColumn: String?
    public var descriptionColumn: String?
    public var payeeColumn: String?
    /// For transactions: the statement's running balance.
    public var balanceColumn: String?
    /// An hledger CSV rules file's text (`--rules-file`), kept so next month needs only the
    /// profile: its columns, descriptions and places.
    public var hledgerRules: String?
    public var dateFormat: String?
    public var decimalComma = false
    public var negate = false
    public var noHeader = false
    public var skipRows: Int?
    public var delimiter: String?
    public var encoding = StatementFile.Encoding.utf8
    public var currency: String?

    public init(id: UUID = RecordIDs.next(), name: String) {
        self.id = id
        self.name = name
    }
}

/// A private free-text note kept beside the finances (`coffer note`): an account number, where
/// the will is, a draft letter to the bank. Its body is as secret as anything in the vault, so it
/// only ever reaches the screen, the vault and (while an editor has it) a RAM-backed file.
public struct Note: Hashable, Sendable {
    /// What a note can be attached to, shown on that record's screen.
    public struct Attachment: Hashable, Sendable {
        public enum Kind: String, Hashable, Sendable, CaseIterable {
            case account, client, invoice
        }
        public let kind: Kind
        public let id: UUID
        public init(kind: Kind, id: UUID) {
            self.kind = kind
            self.id = id
        }
    }

    public let id: UUID
    public var title: String
    public var body: String
    public var attachment: Attachment?
    public let created: CalendarDate
    /// Seconds since 1970, when the body, title or attachment last changed.
    public var updated: Int64

    public init(
        id: UUID = RecordIDs.next(), title: String, body: String, attachment: Attachment? = nil, created: CalendarDate,
        updated: Int64
    ) {
        (self.id, self.title, self.body) = (id, title, body)
        (self.attachment, self.created, self.updated) = (attachment, created, updated)
    }
}

/// A folder that `coffer backup create` writes to by default.
public struct BackupTarget: Hashable, Sendable {
    public var path: String
    public init(path: String) { self.path = path }
}

/// What the vault remembers about its backups: the last sequence number it issued, and per
/// destination the newest archive that was read back and fully verified there.
public struct BackupState: Hashable, Sendable {
    public struct Verified: Hashable, Sendable {
        public var path: String
        public var sequence: UInt64
        /// Seconds since 1970.
        public var time: Int64
        public init(path: String, sequence: UInt64, time: Int64) {
            self.path = path
            self.sequence = sequence
            self.time = time
        }
    }
    public var lastSequence: UInt64
    public var verified: [Verified]
    public init(lastSequence: UInt64 = 0, verified: [Verified] = []) {
        self.lastSequence = lastSequence
        self.verified = verified
    }
}

extension ImportProfile {
    /// Every setting of `other`, keeping this profile's id and name.
    mutating func copySettings(from other: ImportProfile) {
        (destination, account, ruleSet) = (other.destination, other.account, other.ruleSet)
        (dateColumn, amountColumn, debitColumn, creditColumn) = (
            other.dateColumn, other.amountColumn, other.debitColumn, other.creditColumn
        )
        (descriptionColumn, dateFormat, decimalComma, negate) = (
            other.descriptionColumn, other.dateFormat, other.decimalComma, other.negate
        )
        (noHeader, skipRows, delimiter, encoding, currency) = (
            other.noHeader, other.skipRows, other.delimiter, other.encoding, other.currency
        )
        (payeeColumn, balanceColumn, hledgerRules) = (other.payeeColumn, other.balanceColumn, other.hledgerRules)
    }
}
