import FinanceCore
import Foundation
import VaultStore

/// Coffer's own open JSON format (Specs/cli.md, "Export and import"): everything a person put
/// in, with ids, so an export imported into a new vault reproduces every report.
public struct ExportDocument: Codable, Sendable {
    public struct Account: Codable, Sendable {
        let id, name, category, kind: String; let growth: String?; let created: String; let closed: String?
    }
    public struct Update: Codable, Sendable {
        let id, account, date, amount: String; let sequence: UInt64; let note: String?
    }
    public struct Rate: Codable, Sendable { let category, rate: String }
    public struct Category: Codable, Sendable {
        let id, name, type: String; let sortOrder: Int; let isDefault, hidden: Bool
        /// The account spending in it comes from by default (version 3).
        var account: String? = nil
    }
    public struct Source: Codable, Sendable {
        let id, name, amount, frequency: String; let anchor: String?
        var account: String? = nil
    }
    /// The accounts money moved between (version 3): `from` and `to` are account ids, `order`
    /// the flow's place among value updates (their shared `sequence` counter).
    public struct Flow: Codable, Sendable { let from, to: String?; let order: UInt64 }
    public struct Target: Codable, Sendable { let kind: String; let id: String? }
    public struct Entry: Codable, Sendable {
        let id, amount, type: String; let target: Target; let note: String?; let date: String; let sequence: UInt64
        /// Added in version 2: the statement account and row digest (hex) of an imported transaction.
        let importAccount, importHash: String?
        var flow: Flow? = nil
    }
    public struct Rule: Codable, Sendable { let pattern: String; let target: Target }
    public struct RuleSet: Codable, Sendable { let id, name: String; let rules: [Rule] }
    public struct Goal: Codable, Sendable {
        let id, name: String; let target, targetDate: String?
        var account: String? = nil
    }
    public struct Client: Codable, Sendable {
        let id, name: String; let email, address: String?; let terms: Int
        var account: String? = nil
    }
    public struct Item: Codable, Sendable {
        let description, quantity, unitPrice: String
        /// Version 4: "charge" (absent in older files), "discount" or "credit"; a discount given as
        /// a share of the charges has `share` ("10%") instead of an amount.
        var kind: String? = nil
        var share: String? = nil
    }
    public struct Payment: Codable, Sendable {
        let date, amount: String
        /// The account it was paid into, as the flow's `to`.
        var flow: Flow? = nil
    }
    public struct Invoice: Codable, Sendable {
        let id: String; let number: Int; let client: String; let items: [Item]; let tax: String?
        let issued, due: String; let notes: String?; let status: String; let sentOn, voidedOn: String?;
        let payments: [Payment]
        /// Version 4: the reference as printed and the days reminders were sent.
        var reference: String? = nil
        var reminders: [String]? = nil
    }
    /// Version 4: who sends the invoices (`coffer invoice sender`).
    public struct Sender: Codable, Sendable {
        let name, address, email, taxNumber, paymentInstructions, bankDetails: String?
        let taxLabel, numberFormat: String
    }

    static let formatName = "coffer-export"
    /// 2 added uncategorised transactions, their import origin, and rule sets; 3 flows; 4 invoice
    /// line kinds, references, reminders and the invoice sender.
    static let currentVersion = 4

    var format = formatName
    var version = currentVersion
    public let currency: String
    public let includeReceivables: Bool
    var accounts: [Account]?
    var updates: [Update]?
    var categoryRates: [Rate]?
    var budgetCategories: [Category]?
    var incomeSources: [Source]?
    var transactions: [Entry]?
    var goals: [Goal]?
    var clients: [Client]?
    var invoices: [Invoice]?
    var invoiceCounter: Int?
    var ruleSets: [RuleSet]?
    /// Recurring items (version 3).
    var recurring: [Recurring]?

    /// A recurring item: `kind` spending|income|saving|invoice and `target` the category's,
    /// source's, goal's or client's id; `every` monthly|weekly|biweekly|yearly, `day` a monthly
    /// item's day (0 the last).
    public struct Recurring: Codable, Sendable {
        let id, name, amount: String
        var kind, target: String
        var tax: String? = nil
        let every: String
        var day: Int? = nil
        let start: String
        var end: String? = nil
        var note: String? = nil
        var from: String? = nil
        var to: String? = nil
        var handledThrough: String? = nil
    }
    var invoiceSender: Sender?
}

/// One part of the vault an export can be limited to.
public enum ExportSection: String, Sendable, CaseIterable {
    case accounts, updates, transactions, invoices
}

extension ExportDocument {
    public init(ledger: Ledger, only: ExportSection?) {
        let money = ledger.currency.decimalString
        let id = { (uuid: UUID) in uuid.uuidString.lowercased() }
        let flow = { (flow: AccountFlow?) in
            flow.map { Flow(from: $0.from.map(id), to: $0.to.map(id), order: $0.order) }
        }
        currency = ledger.currency.code
        includeReceivables = ledger.settings?.includeReceivables ?? true
        func wanted(_ section: ExportSection) -> Bool { only == nil || only == section }
        if wanted(.accounts) {
            accounts = ledger.accounts.map {
                .init(
                    id: id($0.id), name: $0.name, category: $0.category, kind: $0.kind.rawValue,
                    growth: $0.growthRate?.description, created: $0.created.description, closed: $0.closed?.description)
            }
            categoryRates = ledger.categoryRates.values.sorted { $0.category < $1.category }.map {
                .init(category: $0.category, rate: $0.rate.description)
            }
        }
        if wanted(.updates) {
            updates = ledger.updates.sorted { $0.sequence < $1.sequence }.map {
                .init(
                    id: id($0.id), account: id($0.accountID), date: $0.date.description, amount: money($0.amount),
                    sequence: $0.sequence, note: $0.note)
            }
        }
        if wanted(.transactions) {
            budgetCategories = ledger.budgetCategories.map {
                .init(
                    id: id($0.id), name: $0.name, type: $0.type.rawValue, sortOrder: $0.sortOrder,
                    isDefault: $0.isDefault, hidden: $0.isHidden, account: $0.account.map(id))
            }
            incomeSources = ledger.incomeSources.map { source in
                var anchor: String?
                if case .biweekly(let date) = source.frequency { anchor = date.description }
                return .init(
                    id: id(source.id), name: source.name, amount: money(source.amount),
                    frequency: source.frequency.name, anchor: anchor, account: source.account.map(id))
            }
            transactions = ledger.transactions.sorted { $0.sequence < $1.sequence }.map { entry in
                .init(
                    id: id(entry.id), amount: money(entry.amount), type: entry.type.rawValue,
                    target: Self.target(entry.target), note: entry.note,
                    date: entry.date.description, sequence: entry.sequence, importAccount: entry.origin?.account,
                    importHash: entry.origin.map { $0.rowHash.hexString }, flow: flow(entry.flow))
            }
            recurring = ledger.recurringItems.map { item in
                var row = Recurring(
                    id: id(item.id), name: item.name, amount: money(item.amount), kind: "", target: "",
                    every: item.rule.name, start: item.start.description)
                switch item.entry {
                case .spending(let category): (row.kind, row.target) = ("spending", id(category))
                case .income(let source): (row.kind, row.target) = ("income", id(source))
                case .saving(let goal): (row.kind, row.target) = ("saving", id(goal))
                case .invoice(let client, let tax):
                    (row.kind, row.target) = ("invoice", id(client))
                    row.tax = tax.map { GrowthRate(basisPoints: $0).description }
                }
                if case .monthly(let day) = item.rule { row.day = day }
                row.end = item.end?.description
                row.note = item.note
                row.from = item.from.map(id)
                row.to = item.to.map(id)
                row.handledThrough = item.handledThrough?.description
                return row
            }
            ruleSets = ledger.ruleSets.map { set in
                .init(
                    id: id(set.id), name: set.name,
                    rules: set.rules.map { .init(pattern: $0.pattern, target: Self.target($0.target)) })
            }
            goals = ledger.goals.map {
                .init(
                    id: id($0.id), name: $0.name, target: $0.target.map(money), targetDate: $0.targetDate?.description,
                    account: $0.account.map(id))
            }
        }
        if wanted(.invoices) {
            clients = ledger.clients.map {
                .init(
                    id: id($0.id), name: $0.name, email: $0.email, address: $0.address, terms: $0.termsDays,
                    account: $0.account.map(id))
            }
            invoices = ledger.invoices.map { invoice in
                .init(
                    id: id(invoice.id), number: invoice.number, client: id(invoice.clientID),
                    items: invoice.items.map {
                        .init(
                            description: $0.description, quantity: $0.quantity.description,
                            unitPrice: money($0.unitPrice), kind: $0.kind.rawValue,
                            share: $0.shareBasisPoints.map { GrowthRate(basisPoints: $0).description })
                    },
                    tax: invoice.taxBasisPoints.map { GrowthRate(basisPoints: $0).description },
                    issued: invoice.issued.description,
                    due: invoice.due.description, notes: invoice.notes, status: invoice.stored.rawValue,
                    sentOn: invoice.sentOn?.description,
                    voidedOn: invoice.voidedOn?.description,
                    payments: invoice.payments.map {
                        .init(date: $0.date.description, amount: money($0.amount), flow: flow($0.flow))
                    }, reference: invoice.reference, reminders: invoice.reminders.map(\.description))
            }
            invoiceCounter = ledger.invoiceCounter?.counter.lastNumber
            invoiceSender = ledger.invoiceSenderRecord.map { record in
                let sender = record.sender
                return Sender(
                    name: sender.name, address: sender.address, email: sender.email, taxNumber: sender.taxNumber,
                    paymentInstructions: sender.paymentInstructions, bankDetails: sender.bankDetails,
                    taxLabel: sender.taxLabel.title, numberFormat: sender.numberFormat.pattern)
            }
        }
    }

    static func target(_ target: Transaction.Target) -> Target {
        let id = { (uuid: UUID) in uuid.uuidString.lowercased() }
        switch target {
        case .category(let uuid): return .init(kind: "category", id: id(uuid))
        case .source(let uuid): return .init(kind: "source", id: id(uuid))
        case .goal(let uuid): return .init(kind: "goal", id: id(uuid))
        case .uncategorised: return .init(kind: "uncategorised", id: nil)
        }
    }

    /// Every record the document describes, validated: amounts exact in its currency, dates
    /// real, references resolved. Throws with the section and item at fault.
    public func records() throws -> (currency: Currency, records: [(UUID, FinanceRecord)], counter: Int?) {
        guard format == Self.formatName else {
            throw CofferError(.invalidInput, "This is not a Coffer export (format '\(format)').")
        }
        guard version <= Self.currentVersion else {
            throw CofferError(
                .invalidInput,
                "This export is format version \(version); this Coffer reads up to \(Self.currentVersion). Upgrade Coffer."
            )
        }
        let currency = try Currency.named(self.currency)
        var records: [(UUID, FinanceRecord)] = []
        // Accounts link to nothing; every other section may link to them.
        let accountConverter = Converter(currency: currency, accountIDs: nil)
        for (index, item) in (accounts ?? []).enumerated() {
            let place = Place(section: "accounts", index: index)
            guard let kind = AccountKind(rawValue: item.kind) else {
                throw CofferError(.invalidInput, "\(place): kind '\(item.kind)' is not asset or liability.")
            }
            let id = try accountConverter.uuid(item.id, place)
            records.append(
                (
                    id,
                    .account(
                        FinanceCore.Account(
                            id: id,
                            name: try accountConverter.parse(place) {
                                try FinanceCore.Account.validatedName(item.name)
                            },
                            category: item.category, kind: kind,
                            growthRate: try item.growth.map { text in
                                try accountConverter.parse(place) { try GrowthRate(parsing: text) }
                            },
                            created: try accountConverter.date(item.created, place),
                            closed: try item.closed.map { try accountConverter.date($0, place) })
                    )
                ))
        }
        let converter = Converter(currency: currency, accountIDs: accounts == nil ? nil : Set(records.map(\.0)))
        let uuid = converter.uuid, date = converter.date, money = converter.money
        let linked = converter.linked
        for (index, item) in (updates ?? []).enumerated() {
            records.append(try converter.update(item, Place(section: "updates", index: index)))
        }
        for (index, item) in (categoryRates ?? []).enumerated() {
            records.append(
                (
                    RecordIDs.next(),
                    .categoryRate(
                        CategoryRate(
                            category: item.category,
                            rate: try converter.parse(Place(section: "categoryRates", index: index)) {
                                try GrowthRate(parsing: item.rate)
                            }))
                ))
        }
        for (index, item) in (budgetCategories ?? []).enumerated() {
            let place = Place(section: "budgetCategories", index: index)
            guard let type = BudgetType(rawValue: item.type) else {
                throw CofferError(.invalidInput, "\(place): type '\(item.type)' is not needs, wants or savings.")
            }
            let id = try uuid(item.id, place)
            records.append(
                (
                    id,
                    .budgetCategory(
                        BudgetCategory(
                            id: id, name: item.name, type: type,
                            sortOrder: item.sortOrder, isDefault: item.isDefault, isHidden: item.hidden,
                            account: try linked(item.account, place)))
                ))
        }
        for (index, item) in (incomeSources ?? []).enumerated() {
            let place = Place(section: "incomeSources", index: index)
            let frequency: IncomeFrequency
            switch (item.frequency, item.anchor) {
            case ("monthly", nil): frequency = .monthly
            case ("variable", nil): frequency = .variable
            case ("biweekly", let anchor?): frequency = .biweekly(anchor: try date(anchor, place))
            default:
                throw CofferError(
                    .invalidInput,
                    "\(place): frequency '\(item.frequency)' is not monthly, biweekly (with an anchor) or variable.")
            }
            let id = try uuid(item.id, place)
            records.append(
                (
                    id,
                    .incomeSource(
                        IncomeSource(
                            id: id, name: item.name,
                            amount: try money(item.amount, place), frequency: frequency,
                            account: try linked(item.account, place)))
                ))
        }
        for (index, item) in (transactions ?? []).enumerated() {
            records.append(try converter.transaction(item, Place(section: "transactions", index: index)))
        }
        for (index, item) in (ruleSets ?? []).enumerated() {
            let place = Place(section: "ruleSets", index: index)
            let rules = try item.rules.map {
                CategoryRuleSet.Rule(pattern: $0.pattern, target: try converter.target($0.target, place))
            }
            guard !rules.contains(where: { $0.target == .uncategorised }) else {
                throw CofferError(.invalidInput, "\(place): a rule cannot target uncategorised.")
            }
            let id = try uuid(item.id, place)
            records.append((id, .categoryRuleSet(CategoryRuleSet(id: id, name: item.name, rules: rules))))
        }
        for (index, item) in (recurring ?? []).enumerated() {
            let place = Place(section: "recurring", index: index)
            let target = try uuid(item.target, place)
            let entry: RecurringItem.Entry
            switch item.kind {
            case "spending": entry = .spending(category: target)
            case "income": entry = .income(source: target)
            case "saving": entry = .saving(goal: target)
            case "invoice":
                entry = .invoice(
                    client: target,
                    taxBasisPoints: try item.tax.map { text in
                        try converter.parse(place) { try GrowthRate(parsing: text) }.basisPoints
                    })
            default: throw CofferError(.invalidInput, "\(place): kind '\(item.kind)' is unknown.")
            }
            let rule: RecurrenceRule
            switch (item.every, item.day) {
            case ("monthly", let day?) where (0...31).contains(day): rule = .monthly(day: day)
            case ("weekly", nil): rule = .weekly
            case ("biweekly", nil): rule = .biweekly
            case ("yearly", nil): rule = .yearly
            default:
                throw CofferError(
                    .invalidInput,
                    "\(place): '\(item.every)' is not monthly (with a day 0–31), weekly, biweekly or yearly.")
            }
            let id = try uuid(item.id, place)
            records.append(
                (
                    id,
                    .recurring(
                        RecurringItem(
                            id: id, name: item.name, amount: try money(item.amount, place), entry: entry, rule: rule,
                            start: try date(item.start, place), end: try item.end.map { try date($0, place) },
                            note: item.note, from: try linked(item.from, place), to: try linked(item.to, place),
                            handledThrough: try item.handledThrough.map { try date($0, place) }))
                ))
        }
        for (index, item) in (goals ?? []).enumerated() {
            let place = Place(section: "goals", index: index)
            let id = try uuid(item.id, place)
            records.append(
                (
                    id,
                    .savingsGoal(
                        SavingsGoal(
                            id: id, name: item.name,
                            target: try item.target.map { try money($0, place) },
                            targetDate: try item.targetDate.map { try date($0, place) },
                            account: try linked(item.account, place)))
                ))
        }
        for (index, item) in (clients ?? []).enumerated() {
            let place = Place(section: "clients", index: index)
            let id = try uuid(item.id, place)
            records.append(
                (
                    id,
                    .client(
                        FinanceCore.Client(
                            id: id, name: item.name, email: item.email,
                            address: item.address, termsDays: item.terms, account: try linked(item.account, place)))
                ))
        }
        var numbers = InvoiceNumbers()
        for (index, item) in (invoices ?? []).enumerated() {
            let place = Place(section: "invoices", index: index)
            let (id, invoice) = try converter.invoice(item, place)
            try numbers.insert(invoice, place)
            records.append((id, .invoice(invoice)))
        }
        if let sender = invoiceSender {
            let place = Place(section: "invoiceSender", index: 0)
            guard let label = InvoiceSender.TaxLabel(rawValue: sender.taxLabel.lowercased()) else {
                throw CofferError(.invalidInput, "\(place): tax label '\(sender.taxLabel)' is not VAT or Tax.")
            }
            records.append(
                (
                    RecordIDs.next(),
                    .invoiceSender(
                        try Ledger.checked(
                            InvoiceSender(
                                name: sender.name, address: sender.address, email: sender.email,
                                taxNumber: sender.taxNumber, paymentInstructions: sender.paymentInstructions,
                                bankDetails: sender.bankDetails, taxLabel: label,
                                numberFormat: try converter.parse(place) {
                                    try InvoiceNumberFormat(parsing: sender.numberFormat)
                                }
                            )))
                ))
        }
        // Numbers are never reused: the counter is at least the highest number in the file.
        return (currency, records, numbers.counter(after: invoiceCounter))
    }

    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0, digits.count <= 128 else { return nil }
        return try? stride(from: 0, to: digits.count, by: 2).map { index in
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else {
                throw CofferError(.invalidInput, "")
            }
            return byte
        }
    }
}

/// Where an item sits in an export ("updates[3]"), built into text only when a message needs it.
struct Place: CustomStringConvertible {
    let section: String
    let index: Int
    var description: String { "\(section)[\(index)]" }
}

extension UUID {
    /// Parses the lower- or upper-case 8-4-4-4-12 form without Foundation's scanf-based parser,
    /// which dominates a large import.
    init?(exportedID text: String) {
        var text = text
        guard let value = text.withUTF8({ Self.parse(exportedID: $0) }) else { return nil }
        self = value
    }

    private static func parse(exportedID text: UnsafeBufferPointer<UInt8>) -> UUID? {
        guard text.count == 36 else { return nil }
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        let parsed = withUnsafeMutableBytes(of: &bytes) { out -> Bool in
            var position = 0
            for index in 0..<16 {
                if position == 8 || position == 13 || position == 18 || position == 23 {
                    guard text[position] == UInt8(ascii: "-") else { return false }
                    position += 1
                }
                guard let high = nibble(text[position]), let low = nibble(text[position + 1]) else { return false }
                out[index] = high << 4 | low
                position += 2
            }
            return true
        }
        return parsed ? UUID(uuid: bytes) : nil
    }

    private static func nibble(_ unit: UInt8) -> UInt8? {
        switch unit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): unit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): unit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): unit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
