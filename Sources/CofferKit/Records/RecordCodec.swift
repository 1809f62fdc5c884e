import Foundation
import FinanceCore

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
}

/// Turns finance values into compact, versioned payload bytes and back (Specs/record-payloads.md).
///
/// Byte 0 is the record kind, byte 1 its payload version; the fields follow as LEB128 varints
/// (signed ones zig-zag encoded), length-prefixed UTF-8 strings and raw 16-byte ids. Decoding
/// dispatches on the version, so an older payload is read by its own decoder and upgraded to
/// today's model: that chain is where payload migrations live.
/// The one list of record kinds: a payload's first byte. The raw values are stored in every
/// vault and archive, so they are pinned here and never reused; a new kind takes the next number.
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

    /// The payload version this kind is written with today (a payload's second byte). Raising it
    /// needs a decoder for the new version beside the old ones (Specs/record-payloads.md).
    public var currentVersion: UInt8 {
        switch self {
        case .settings: 2
        case .account: 1
        case .update: 2
        case .categoryRate: 1
        case .change: 1
        case .backupTarget: 1
        case .backupState: 1
        case .budgetCategory: 1
        case .incomeSource: 1
        case .transaction: 2
        case .savingsGoal: 1
        case .client: 1
        case .invoice: 1
        case .invoiceCounter: 1
        case .categoryRuleSet: 1
        }
    }
}

extension FinanceRecord {
    /// Which kind of record this is.
    public var kind: RecordKind {
        switch self {
        case .settings: .settings
        case .account: .account
        case .update: .update
        case .categoryRate: .categoryRate
        case .change: .change
        case .backupTarget: .backupTarget
        case .backupState: .backupState
        case .budgetCategory: .budgetCategory
        case .incomeSource: .incomeSource
        case .transaction: .transaction
        case .savingsGoal: .savingsGoal
        case .client: .client
        case .invoice: .invoice
        case .invoiceCounter: .invoiceCounter
        case .categoryRuleSet: .categoryRuleSet
        }
    }
}

public enum RecordCodec {
    public static func encode(_ record: FinanceRecord) -> [UInt8] {
        var writer = PayloadWriter()
        switch record {
        case .settings(let settings):
            writer.header(.settings)
            writer.string(settings.currency.code)
            writer.bool(settings.includeReceivables)
        case .account(let account):
            writer.header(.account)
            writer.string(account.name)
            writer.string(account.category)
            writer.tag(account.kind)
            writer.optional(account.growthRate) { $0.signed(Int64($1.basisPoints)) }
            writer.date(account.created)
            writer.optional(account.closed) { $0.date($1) }
        case .update(let update):
            writer.header(.update)
            writer.uuid(update.accountID)
            writer.date(update.date)
            writer.signed(update.amount.minorUnits)
            writer.unsigned(update.sequence)
            writer.optional(update.note) { $0.string($1) }
        case .categoryRate(let categoryRate):
            writer.header(.categoryRate)
            writer.string(categoryRate.category)
            writer.signed(Int64(categoryRate.rate.basisPoints))
        case .change(let change):
            writer.header(.change)
            writer.unsigned(change.sequence)
            writer.signed(change.timestamp)
            writer.string(change.summary)
            writer.unsigned(UInt64(change.before.count))
            for before in change.before {
                writer.uuid(before.recordID)
                writer.optional(before.payload) { $0.bytes($1) }
            }
        case .backupTarget(let target):
            writer.header(.backupTarget)
            writer.string(target.path)
        case .backupState(let state):
            writer.header(.backupState)
            writer.unsigned(state.lastSequence)
            writer.unsigned(UInt64(state.verified.count))
            for verified in state.verified {
                writer.string(verified.path)
                writer.unsigned(verified.sequence)
                writer.signed(verified.time)
            }
        case .budgetCategory(let category):
            writer.header(.budgetCategory)
            writer.string(category.name)
            writer.tag(category.type)
            writer.signed(Int64(category.sortOrder))
            writer.byte((category.isDefault ? 1 : 0) | (category.isHidden ? 2 : 0))
        case .incomeSource(let source):
            writer.header(.incomeSource)
            writer.string(source.name)
            writer.signed(source.amount.minorUnits)
            writer.frequency(source.frequency)
        case .transaction(let transaction):
            writer.header(.transaction)
            writer.signed(transaction.amount.minorUnits)
            writer.tag(transaction.type)
            writer.target(transaction.target)
            writer.optional(transaction.note) { $0.string($1) }
            writer.date(transaction.date)
            writer.unsigned(transaction.sequence)
            writer.optional(transaction.origin) { writer, origin in
                writer.string(origin.account)
                writer.bytes(origin.rowHash)
            }
        case .savingsGoal(let goal):
            writer.header(.savingsGoal)
            writer.string(goal.name)
            writer.optional(goal.target) { $0.signed($1.minorUnits) }
            writer.optional(goal.targetDate) { $0.date($1) }
        case .client(let client):
            writer.header(.client)
            writer.string(client.name)
            writer.optional(client.email) { $0.string($1) }
            writer.optional(client.address) { $0.string($1) }
            writer.signed(Int64(client.termsDays))
        case .invoice(let invoice):
            writer.header(.invoice)
            writer.unsigned(UInt64(invoice.number))
            writer.uuid(invoice.clientID)
            writer.unsigned(UInt64(invoice.items.count))
            for item in invoice.items {
                writer.string(item.description)
                writer.signed(item.quantity.thousandths)
                writer.signed(item.unitPrice.minorUnits)
            }
            writer.optional(invoice.taxBasisPoints) { $0.signed(Int64($1)) }
            writer.date(invoice.issued)
            writer.date(invoice.due)
            writer.optional(invoice.notes) { $0.string($1) }
            writer.tag(invoice.stored)
            writer.optional(invoice.sentOn) { $0.date($1) }
            writer.optional(invoice.voidedOn) { $0.date($1) }
            writer.unsigned(UInt64(invoice.payments.count))
            for payment in invoice.payments {
                writer.date(payment.date)
                writer.signed(payment.amount.minorUnits)
            }
        case .invoiceCounter(let counter):
            writer.header(.invoiceCounter)
            writer.unsigned(UInt64(counter.lastNumber))
        case .categoryRuleSet(let set):
            writer.header(.categoryRuleSet)
            writer.string(set.name)
            writer.unsigned(UInt64(set.rules.count))
            for rule in set.rules {
                writer.string(rule.pattern)
                writer.target(rule.target)
            }
        }
        return writer.bytes
    }

    /// Decodes a payload. `id` is the record's id: accounts, updates and change entries use it
    /// as their own identity.
    public static func decode(_ bytes: UnsafeRawBufferPointer, id: UUID) throws -> FinanceRecord {
        var reader = PayloadReader(bytes)
        let kindByte = try reader.byte()
        let version = try reader.byte()
        guard let kind = RecordKind(rawValue: kindByte) else {
            throw FinanceError(.invalidRecord, "A record has an unknown kind (\(kindByte)); it may have been written by a newer Coffer.")
        }
        guard version >= 1, version <= kind.currentVersion else {
            throw FinanceError(.invalidRecord, "A record uses payload version \(version), newer than this Coffer reads; upgrade Coffer.")
        }
        let record: FinanceRecord
        switch kind {
        case .settings:
            let currency = try Currency.named(try reader.string())
            // Version 1 had no receivables switch: it was on.
            let includeReceivables = version >= 2 ? try reader.bool() : true
            record = .settings(VaultSettings(currency: currency, includeReceivables: includeReceivables))
        case .account:
            let name = try reader.string(), category = try reader.string()
            let kind: AccountKind = try reader.tag()
            let rate = try reader.optional { GrowthRate(basisPoints: Int(try $0.signed())) }
            let created = try reader.date()
            let closed = try reader.optional { try $0.date() }
            record = .account(Account(id: id, name: name, category: category, kind: kind, growthRate: rate, created: created, closed: closed))
        case .update:
            let accountID = try reader.uuid(), date = try reader.date()
            let amount = Money(minorUnits: try reader.signed()), sequence = try reader.unsigned()
            // Version 1 had no note: it upgrades to "no note".
            let note = version >= 2 ? try reader.optional { try $0.string() } : nil
            record = .update(ValueUpdate(id: id, accountID: accountID, date: date, amount: amount, sequence: sequence, note: note))
        case .categoryRate:
            record = .categoryRate(CategoryRate(category: try reader.string(), rate: GrowthRate(basisPoints: Int(try reader.signed()))))
        case .change:
            let sequence = try reader.unsigned(), timestamp = try reader.signed(), summary = try reader.string()
            let count = try reader.unsigned()
            guard count <= UInt64(bytes.count) else { throw PayloadReader.malformed }
            var before: [ChangeEntry.Before] = []
            for _ in 0..<count {
                before.append(.init(recordID: try reader.uuid(), payload: try reader.optional { try $0.bytes() }))
            }
            record = .change(ChangeEntry(sequence: sequence, timestamp: timestamp, summary: summary, before: before))
        case .backupTarget:
            record = .backupTarget(BackupTarget(path: try reader.string()))
        case .backupState:
            let last = try reader.unsigned()
            let count = try reader.unsigned()
            guard count <= UInt64(bytes.count) else { throw PayloadReader.malformed }
            var verified: [BackupState.Verified] = []
            for _ in 0..<count {
                verified.append(.init(path: try reader.string(), sequence: try reader.unsigned(), time: try reader.signed()))
            }
            record = .backupState(BackupState(lastSequence: last, verified: verified))
        case .budgetCategory:
            let name = try reader.string()
            let type: BudgetType = try reader.tag()
            let order = try reader.signed(), flags = try reader.byte()
            guard flags <= 3, let sortOrder = Int(exactly: order) else { throw PayloadReader.malformed }
            record = .budgetCategory(BudgetCategory(id: id, name: name, type: type, sortOrder: sortOrder,
                                                    isDefault: flags & 1 != 0, isHidden: flags & 2 != 0))
        case .incomeSource:
            let name = try reader.string(), amount = Money(minorUnits: try reader.signed())
            let frequency = try reader.frequency()
            record = .incomeSource(IncomeSource(id: id, name: name, amount: amount, frequency: frequency))
        case .transaction:
            let amount = Money(minorUnits: try reader.signed())
            let type: TransactionType = try reader.tag()
            // Version 1 had neither the uncategorised target nor an import origin.
            let target = try reader.target(allowingUncategorised: version >= 2)
            let note = try reader.optional { try $0.string() }
            let date = try reader.date(), sequence = try reader.unsigned()
            let origin = version >= 2 ? try reader.optional { StatementOrigin(account: try $0.string(), rowHash: try $0.bytes()) } : nil
            record = .transaction(Transaction(id: id, amount: amount, type: type, target: target,
                                              note: note, date: date, sequence: sequence, origin: origin))
        case .savingsGoal:
            let name = try reader.string()
            let target = try reader.optional { Money(minorUnits: try $0.signed()) }
            record = .savingsGoal(SavingsGoal(id: id, name: name, target: target, targetDate: try reader.optional { try $0.date() }))
        case .client:
            let name = try reader.string(), email = try reader.optional { try $0.string() }, address = try reader.optional { try $0.string() }
            guard let terms = Int(exactly: try reader.signed()) else { throw PayloadReader.malformed }
            record = .client(Client(id: id, name: name, email: email, address: address, termsDays: terms))
        case .invoice:
            guard let number = Int(exactly: try reader.unsigned()) else { throw PayloadReader.malformed }
            let clientID = try reader.uuid()
            let itemCount = try reader.unsigned()
            guard itemCount <= UInt64(bytes.count) else { throw PayloadReader.malformed }
            var items: [LineItem] = []
            for _ in 0..<itemCount {
                items.append(LineItem(description: try reader.string(), quantity: Quantity(thousandths: try reader.signed()),
                                      unitPrice: Money(minorUnits: try reader.signed())))
            }
            let tax = try reader.optional { Int(truncatingIfNeeded: try $0.signed()) }
            let issued = try reader.date(), due = try reader.date(), notes = try reader.optional { try $0.string() }
            let status: Invoice.StoredStatus = try reader.tag()
            let sentOn = try reader.optional { try $0.date() }, voidedOn = try reader.optional { try $0.date() }
            let paymentCount = try reader.unsigned()
            guard paymentCount <= UInt64(bytes.count) else { throw PayloadReader.malformed }
            var payments: [Payment] = []
            for _ in 0..<paymentCount { payments.append(Payment(date: try reader.date(), amount: Money(minorUnits: try reader.signed()))) }
            record = .invoice(Invoice(id: id, number: number, clientID: clientID, items: items, taxBasisPoints: tax, issued: issued, due: due,
                                      notes: notes, stored: status, sentOn: sentOn, voidedOn: voidedOn,
                                      payments: payments))
        case .invoiceCounter:
            guard let last = Int(exactly: try reader.unsigned()) else { throw PayloadReader.malformed }
            record = .invoiceCounter(InvoiceCounter(lastNumber: last))
        case .categoryRuleSet:
            let name = try reader.string()
            let count = try reader.unsigned()
            guard count <= UInt64(bytes.count) else { throw PayloadReader.malformed }
            var rules: [CategoryRuleSet.Rule] = []
            for _ in 0..<count {
                rules.append(CategoryRuleSet.Rule(pattern: try reader.string(), target: try reader.target(allowingUncategorised: false)))
            }
            record = .categoryRuleSet(CategoryRuleSet(id: id, name: name, rules: rules))
        }
        guard reader.isAtEnd else { throw PayloadReader.malformed }
        return record
    }

    /// Re-encodes a payload of any readable version at the current one: the migration step a
    /// restore applies to every record.
    public static func upgraded(_ payload: [UInt8], id: UUID) throws -> [UInt8] {
        encode(try decode(payload, id: id))
    }

    /// Whether a payload is the vault's backup bookkeeping, which archives leave out: it
    /// describes the archives themselves and is rebuilt on restore.
    public static func isBackupState<Payload: Collection>(_ payload: Payload) -> Bool where Payload.Element == UInt8 {
        payload.first == RecordKind.backupState.rawValue
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

    public static func decode(_ bytes: [UInt8], id: UUID) throws -> FinanceRecord {
        try bytes.withUnsafeBytes { try decode($0, id: id) }
    }
}

struct PayloadWriter {
    private(set) var bytes: [UInt8] = []

    mutating func header(_ kind: RecordKind) {
        bytes.append(kind.rawValue)
        bytes.append(kind.currentVersion)
    }

    mutating func byte(_ value: UInt8) { bytes.append(value) }
    mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }

    mutating func unsigned(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(value & 0x7f) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    mutating func signed(_ value: Int64) { unsigned(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }
    mutating func date(_ date: CalendarDate) { signed(Int64(date.dayNumber)) }

    mutating func bytes(_ value: [UInt8]) {
        unsigned(UInt64(value.count))
        bytes.append(contentsOf: value)
    }

    mutating func string(_ value: String) { bytes(Array(value.utf8)) }

    mutating func uuid(_ value: UUID) { withUnsafeBytes(of: value.uuid) { bytes.append(contentsOf: $0) } }

    mutating func optional<T>(_ value: T?, _ write: (inout PayloadWriter, T) -> Void) {
        guard let value else { return byte(0) }
        byte(1)
        write(&self, value)
    }
}

/// Bounds-checked reader: a truncated or malformed payload throws, never traps.
struct PayloadReader {
    static let malformed = FinanceError(.invalidRecord, "A record's contents are malformed.")
    private let buffer: UnsafeRawBufferPointer
    private var offset = 0

    init(_ buffer: UnsafeRawBufferPointer) { self.buffer = buffer }

    var isAtEnd: Bool { offset == buffer.count }

    mutating func byte() throws -> UInt8 {
        guard offset < buffer.count else { throw Self.malformed }
        defer { offset += 1 }
        return buffer[offset]
    }

    /// 0 or 1; any other byte is malformed.
    mutating func bool() throws -> Bool {
        switch try byte() {
        case 0: return false
        case 1: return true
        default: throw Self.malformed
        }
    }

    mutating func unsigned() throws -> UInt64 {
        var result: UInt64 = 0
        for shift in stride(from: 0, to: 64, by: 7) {
            let next = try byte()
            result |= UInt64(next & 0x7f) << UInt64(shift)
            if next & 0x80 == 0 { return result }
        }
        throw Self.malformed
    }

    mutating func signed() throws -> Int64 {
        let raw = try unsigned()
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    mutating func date() throws -> CalendarDate {
        let number = try signed()
        guard let day = Int(exactly: number), (-719_162...2_932_896).contains(day) else { throw Self.malformed }
        return CalendarDate(dayNumber: day)
    }

    mutating func bytes() throws -> [UInt8] {
        let count = try unsigned()
        guard count <= UInt64(buffer.count - offset) else { throw Self.malformed }
        defer { offset += Int(count) }
        return Array(buffer[offset..<offset + Int(count)])
    }

    mutating func string() throws -> String {
        guard let text = String(validating: try bytes(), as: UTF8.self) else { throw Self.malformed }
        return text
    }

    mutating func uuid() throws -> UUID {
        guard buffer.count - offset >= 16 else { throw Self.malformed }
        defer { offset += 16 }
        var raw: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &raw) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: buffer[offset..<offset + 16])) }
        return UUID(uuid: raw)
    }

    mutating func optional<T>(_ read: (inout PayloadReader) throws -> T) throws -> T? {
        switch try byte() {
        case 0: return nil
        case 1: return try read(&self)
        default: throw Self.malformed
        }
    }
}
