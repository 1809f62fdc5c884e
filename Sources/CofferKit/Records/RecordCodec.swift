import FinanceCore
import Foundation

/// Everything Coffer stores in a vault, one value per record.
public enum FinanceRecord: Hashable, Sendable {
    case settings(VaultSettings)
    case account(Account)
    case update(ValueUpdate)
    case categoryRate(CategoryRate)
    case change(ChangeEntry)
    case backupTarget(BackupTarget)
    case backupState(BackupState)
    case budgetCategory(BudgetCategory)
    case incomeSource(IncomeSource)
    case transaction(Transaction)
    case savingsGoal(SavingsGoal)
    case client(Client)
    case invoice(Invoice)
    case invoiceCounter(InvoiceCounter)
    case categoryRuleSet(CategoryRuleSet)
    case syncState(SyncState)
    case syncIndex(SyncIndexData)
    case syncConflict(SyncConflict)
    case undoneChange(UndoneChange)
    case importProfile(ImportProfile)
    case note(Note)
    case recurring(RecurringItem)
    case invoiceSender(InvoiceSender)
    case summary(LedgerSummary)

    /// Which kind of record this is.
    public var kind: RecordKind { type(of: payload).recordKind }

    /// The value inside, as the payload its kind's file encodes.
    var payload: any RecordPayload {
        switch self {
        case .settings(let value): value
        case .account(let value): value
        case .update(let value): value
        case .categoryRate(let value): value
        case .change(let value): value
        case .backupTarget(let value): value
        case .backupState(let value): value
        case .budgetCategory(let value): value
        case .incomeSource(let value): value
        case .transaction(let value): value
        case .savingsGoal(let value): value
        case .client(let value): value
        case .invoice(let value): value
        case .invoiceCounter(let value): value
        case .categoryRuleSet(let value): value
        case .syncState(let value): value
        case .syncIndex(let value): value
        case .syncConflict(let value): value
        case .undoneChange(let value): value
        case .importProfile(let value): value
        case .note(let value): value
        case .recurring(let value): value
        case .invoiceSender(let value): value
        case .summary(let value): value
        }
    }
}

/// A value stored as one kind of record. Each kind's file in Kinds/ holds its payload's version
/// history, today's encoding, a decoder for every version ever written, and the upgrade of older
/// versions to today's model.
protocol RecordPayload {
    static var recordKind: RecordKind { get }

    /// Writes today's fields, after the header (`recordKind`, its `currentVersion`) the codec writes.
    func encodeFields(into writer: inout PayloadWriter)

    /// Reads the fields of a payload at `version`, which the codec has checked is from 1 through
    /// `recordKind.currentVersion`, and upgrades them to today's model. `id` is the record's id, the
    /// identity of the kinds that have one.
    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> Self
}

/// Turns finance values into compact, versioned payload bytes and back (Specs/record-payloads.md).
///
/// Byte 0 is the record kind, byte 1 its payload version; the fields follow (PayloadPrimitives.swift,
/// WireTags.swift). Each kind's fields are in its own file in Kinds/; this only dispatches. Decoding
/// hands the version to the kind, so an older payload is read by its own decoder and upgraded to
/// today's model: that chain is where payload migrations live.
public enum RecordCodec {
    public static func encode(_ record: FinanceRecord) -> [UInt8] {
        encode(record.payload)
    }

    static func encode(_ value: some RecordPayload) -> [UInt8] {
        var writer = PayloadWriter()
        writer.header(type(of: value).recordKind)
        value.encodeFields(into: &writer)
        return writer.bytes
    }

    /// Decodes a payload. `id` is the record's id: accounts, updates and change entries use it
    /// as their own identity.
    public static func decode(_ bytes: UnsafeRawBufferPointer, id: UUID) throws -> FinanceRecord {
        var reader = PayloadReader(bytes)
        let kindByte = try reader.byte()
        let version = try reader.byte()
        guard let kind = RecordKind(rawValue: kindByte) else {
            throw FinanceError(
                .invalidRecord,
                "A record has an unknown kind (\(kindByte)); it may have been written by a newer Coffer.")
        }
        guard version >= 1, version <= kind.currentVersion else {
            throw FinanceError(
                .invalidRecord,
                "A record uses payload version \(version), newer than this Coffer reads; upgrade Coffer.")
        }
        func fields<Value: RecordPayload>() throws -> Value {
            try Value.decodeFields(version: version, from: &reader, id: id)
        }
        let record: FinanceRecord =
            switch kind {
            case .settings: .settings(try fields())
            case .account: .account(try fields())
            case .update: .update(try fields())
            case .categoryRate: .categoryRate(try fields())
            case .change: .change(try fields())
            case .backupTarget: .backupTarget(try fields())
            case .backupState: .backupState(try fields())
            case .budgetCategory: .budgetCategory(try fields())
            case .incomeSource: .incomeSource(try fields())
            case .transaction: .transaction(try fields())
            case .savingsGoal: .savingsGoal(try fields())
            case .client: .client(try fields())
            case .invoice: .invoice(try fields())
            case .invoiceCounter: .invoiceCounter(try fields())
            case .categoryRuleSet: .categoryRuleSet(try fields())
            case .syncState: .syncState(try fields())
            case .syncIndex: .syncIndex(try fields())
            case .syncConflict: .syncConflict(try fields())
            case .undoneChange: .undoneChange(try fields())
            case .importProfile: .importProfile(try fields())
            case .note: .note(try fields())
            case .recurring: .recurring(try fields())
            case .invoiceSender: .invoiceSender(try fields())
            case .summary: .summary(try fields())
            }
        guard reader.isAtEnd else { throw PayloadReader.malformed }
        return record
    }

    public static func decode(_ bytes: [UInt8], id: UUID) throws -> FinanceRecord {
        try bytes.withUnsafeBytes { try decode($0, id: id) }
    }

    /// Re-encodes a payload of any readable version at the current one: the migration step a
    /// restore applies to every record.
    public static func upgraded(_ payload: [UInt8], id: UUID) throws -> [UInt8] {
        encode(try decode(payload, id: id))
    }

    /// Decodes a payload (which proves it readable) and gives it re-encoded only when its
    /// version is older than its kind's current one: a payload already current is kept as it
    /// is, so a restore re-encodes only what a migration changes.
    static func upgradedIfOlder(_ payload: UnsafeRawBufferPointer, id: UUID) throws
        -> (record: FinanceRecord, upgraded: [UInt8]?)
    {
        let record = try decode(payload, id: id)
        return (record, payload[1] == record.kind.currentVersion ? nil : encode(record))
    }

    /// Whether a payload is bookkeeping of this copy of the vault (`RecordKind.isLocal`: its
    /// backups, its place in a sync folder), which archives and sync leave out: a restored or
    /// joined copy rebuilds its own.
    public static func isLocal<Payload: Collection>(_ payload: Payload) -> Bool where Payload.Element == UInt8 {
        payload.first.flatMap { RecordKind(rawValue: $0) }?.isLocal ?? false
    }

    /// Whether a payload is a change-log entry, without decoding it: how a restore compares the
    /// history in an archive with the vault's.
    public static func isChange<Payload: Collection>(_ payload: Payload) -> Bool where Payload.Element == UInt8 {
        payload.first == RecordKind.change.rawValue
    }

    /// Whether a payload is a budget transaction, without decoding it: the most numerous kind,
    /// which a whole-vault decode places straight into one preallocated array.
    public static func isTransaction(_ payload: UnsafeRawBufferPointer) -> Bool {
        payload.first == RecordKind.transaction.rawValue
    }
}
