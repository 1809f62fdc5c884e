import FinanceCore
import Foundation

extension ExportDocument {
    /// Turns an export's items into records, validated one at a time, so that the long sections
    /// (updates, transactions, invoices) can be converted as they stream in, on every core.
    struct Converter: Sendable {
        let currency: Currency
        /// The accounts in the file; nil when it has none, and links are then taken as given.
        let accountIDs: Set<UUID>?

        func uuid(_ text: String, _ place: Place) throws -> UUID {
            guard let value = UUID(exportedID: text) else {
                throw CofferError(.invalidInput, "\(place): '\(text)' is not an id.")
            }
            return value
        }

        func parse<T>(_ place: Place, _ body: () throws -> T) throws -> T {
            do { return try body() } catch let error as FinanceError {
                throw CofferError(.invalidInput, "\(place): \(error.errorDescription ?? "invalid").")
            }
        }

        func date(_ text: String, _ place: Place) throws -> CalendarDate {
            try parse(place) { try CalendarDate(parsing: text) }
        }

        func money(_ text: String, _ place: Place) throws -> Money { try parse(place) { try currency.parse(text) } }

        /// An account a link names: an id, and in the file when the file has accounts.
        func linked(_ text: String?, _ place: Place) throws -> UUID? {
            guard let text else { return nil }
            let account = try uuid(text, place)
            guard accountIDs?.contains(account) ?? true else {
                throw CofferError(.invalidInput, "\(place): the account it names is not in the file.")
            }
            return account
        }

        func flow(_ flow: Flow?, _ place: Place) throws -> AccountFlow? {
            guard let flow else { return nil }
            guard flow.from != nil || flow.to != nil, flow.from != flow.to else {
                throw CofferError(.invalidInput, "\(place): a flow names two different accounts, or one.")
            }
            return AccountFlow(from: try linked(flow.from, place), to: try linked(flow.to, place), order: flow.order)
        }

        func target(_ target: Target, _ place: Place) throws -> Transaction.Target {
            if target.kind == "uncategorised" { return .uncategorised }
            guard let text = target.id else { throw CofferError(.invalidInput, "\(place): its target has no id.") }
            switch target.kind {
            case "category": return .category(try uuid(text, place))
            case "source": return .source(try uuid(text, place))
            case "goal": return .goal(try uuid(text, place))
            default: throw CofferError(.invalidInput, "\(place): target kind '\(target.kind)' is unknown.")
            }
        }

        func update(_ item: Update, _ place: Place) throws -> (UUID, FinanceRecord) {
            let account = try uuid(item.account, place)
            guard accountIDs?.contains(account) ?? true else {
                throw CofferError(.invalidInput, "\(place): its account is not in the file.")
            }
            let id = try uuid(item.id, place)
            return (
                id,
                .update(
                    ValueUpdate(
                        id: id, accountID: account, date: try date(item.date, place),
                        amount: try money(item.amount, place), sequence: item.sequence, note: item.note))
            )
        }

        func transaction(_ item: Entry, _ place: Place) throws -> (UUID, FinanceRecord) {
            guard let type = TransactionType(rawValue: item.type) else {
                throw CofferError(.invalidInput, "\(place): type '\(item.type)' is unknown.")
            }
            let target = try self.target(item.target, place)
            var origin: StatementOrigin?
            if let account = item.importAccount, let hash = item.importHash {
                guard let bytes = ExportDocument.bytes(hex: hash) else {
                    throw CofferError(.invalidInput, "\(place): importHash '\(hash)' is not hex.")
                }
                origin = StatementOrigin(account: account, rowHash: bytes)
            }
            let id = try uuid(item.id, place)
            return (
                id,
                .transaction(
                    Transaction(
                        id: id, amount: try money(item.amount, place), type: type,
                        target: target, note: item.note, date: try date(item.date, place),
                        sequence: item.sequence, origin: origin, flow: try flow(item.flow, place)))
            )
        }

        /// An invoice as the command line would accept it: lines and totals that make sense, no
        /// more paid than is owed. Numbers and references are checked across invoices by
        /// `InvoiceNumbers`.
        func invoice(_ item: Invoice, _ place: Place) throws -> (UUID, FinanceCore.Invoice) {
            guard let status = FinanceCore.Invoice.StoredStatus(rawValue: item.status) else {
                throw CofferError(.invalidInput, "\(place): status '\(item.status)' is unknown.")
            }
            let items = try item.items.map { line in
                guard let kind = LineItem.Kind(rawValue: line.kind ?? "charge") else {
                    throw CofferError(.invalidInput, "\(place): line kind '\(line.kind ?? "")' is unknown.")
                }
                return LineItem(
                    description: line.description, quantity: try parse(place) { try Quantity(parsing: line.quantity) },
                    unitPrice: try money(line.unitPrice, place), kind: kind,
                    shareBasisPoints: try line.share.map { text in
                        try parse(place) { try GrowthRate(parsing: text) }.basisPoints
                    })
            }
            let id = try uuid(item.id, place)
            let invoice = FinanceCore.Invoice(
                id: id, number: item.number, clientID: try uuid(item.client, place), items: items,
                taxBasisPoints: try item.tax.map { text in
                    try parse(place) { try GrowthRate(parsing: text) }.basisPoints
                },
                issued: try date(item.issued, place), due: try date(item.due, place), notes: item.notes,
                stored: status,
                sentOn: try item.sentOn.map { try date($0, place) },
                voidedOn: try item.voidedOn.map { try date($0, place) },
                payments: try item.payments.map {
                    FinanceCore.Payment(
                        date: try date($0.date, place), amount: try money($0.amount, place),
                        flow: try flow($0.flow, place))
                }, reference: item.reference,
                reminders: try (item.reminders ?? []).map { try date($0, place) })
            do {
                let checked = try Ledger.checked(invoice)
                guard try checked.outstanding() >= .zero || checked.stored == .void else {
                    throw CofferError(.invalidInput, "more is paid than the invoice's total.")
                }
                return (id, checked)
            } catch let error as CofferError {
                throw CofferError(.invalidInput, "\(place): \(error.message)")
            } catch let error as FinanceError {
                throw CofferError(.invalidInput, "\(place): \(error.errorDescription ?? "invalid")")
            }
        }
    }

    /// Every invoice number and reference in a file, each at most once.
    struct InvoiceNumbers {
        private var numbers: Set<Int> = []
        private var references: Set<String> = []

        mutating func insert(_ invoice: FinanceCore.Invoice, _ place: Place) throws {
            guard numbers.insert(invoice.number).inserted, references.insert(invoice.reference.lowercased()).inserted
            else {
                throw CofferError(.invalidInput, "\(place): another invoice has its number or reference.")
            }
        }

        /// Numbers are never reused: the counter is at least the highest number in the file.
        func counter(after kept: Int?) -> Int? { kept.map { max($0, numbers.max() ?? 0) } ?? numbers.max() }
    }
}
