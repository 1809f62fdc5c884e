import CSV
import FinanceCore
import Foundation

/// `coffer export csv`: everything as one table a spreadsheet opens, one row per account, value,
/// transaction and invoice, written with CSV.swift (RFC 4180 quoting). Transactions carry signed
/// amounts (money in positive) under `date`, `amount` and `description`, so an export
/// `--only transactions` imports back with `coffer import csv --into transactions`.
public enum CSVExport {
    static let columns = [
        "record", "id", "date", "name", "category", "type", "amount", "currency", "description", "status", "reference",
        "due",
    ]

    /// A cell a spreadsheet would run as a formula (OWASP "CSV injection": a leading `=`, `+`,
    /// `-`, `@`, tab or carriage return) gets a leading `'`, which spreadsheets show as text; a
    /// plain number such as `-12.50` is left as it is. `coffer import csv` drops that quote again.
    static func neutralised(_ cell: String) -> String {
        guard let first = cell.unicodeScalars.first, formulaStarts.contains(first), !isPlainNumber(cell) else {
            return cell
        }
        return "'" + cell
    }

    static let formulaStarts: Set<Unicode.Scalar> = ["=", "+", "-", "@", "\t", "\r"]

    static func isPlainNumber(_ cell: String) -> Bool {
        cell.wholeMatch(of: /[+-]?[0-9]+(\.[0-9]+)?/) != nil
    }

    public static func render(_ ledger: Ledger, only: ExportSection?, today: CalendarDate) throws -> Data {
        let stream = OutputStream(toMemory: ())
        let writer = try CSVWriter(stream: stream)
        try writer.write(row: columns)
        let currency = ledger.currency
        let money = currency.decimalString
        let id = { (uuid: UUID) in uuid.uuidString.lowercased() }
        func wanted(_ section: ExportSection) -> Bool { only == nil || only == section }
        func row(
            _ record: String, _ uuid: UUID, date: CalendarDate, name: String, category: String, type: String,
            amount: Money?,
            description: String? = nil, status: String = "", reference: String = "", due: CalendarDate? = nil
        ) throws {
            try writer.write(
                row: [
                    record, id(uuid), date.description, name, category, type, amount.map(money) ?? "", currency.code,
                    description ?? "", status, reference, due?.description ?? "",
                ].map(neutralised))
        }
        if wanted(.accounts) {
            for account in ledger.accounts {
                try row(
                    "account", account.id, date: account.created, name: account.name, category: account.category,
                    type: account.kind.rawValue,
                    amount: ledger.portfolio.value(of: account, on: today),
                    description: account.growthRate.map { "growth \($0)" },
                    status: account.closed.map { "closed \($0)" } ?? "open")
            }
        }
        if wanted(.updates) {
            let accounts = Dictionary(uniqueKeysWithValues: ledger.accounts.map { ($0.id, $0) })
            for update in ledger.updates.sorted(by: { ($0.date, $0.sequence) < ($1.date, $1.sequence) }) {
                let account = accounts[update.accountID]
                try row(
                    "update", update.id, date: update.date, name: account?.name ?? "",
                    category: account?.category ?? "",
                    type: account?.kind.rawValue ?? "", amount: update.amount, description: update.note)
            }
        }
        if wanted(.transactions) {
            for transaction in ledger.transactions.sorted(by: { ($0.date, $0.sequence) < ($1.date, $1.sequence) }) {
                try row(
                    "transaction", transaction.id, date: transaction.date, name: transaction.origin?.account ?? "",
                    category: ledger.label(of: transaction), type: transaction.type.rawValue,
                    amount: transaction.signedAmount, description: transaction.note,
                    status: transaction.target == .uncategorised ? "uncategorised" : "")
            }
        }
        if wanted(.invoices) {
            for invoice in ledger.invoices {
                let client = ledger.clients.first { $0.id == invoice.clientID }?.name ?? ""
                try row(
                    "invoice", invoice.id, date: invoice.issued, name: client, category: "", type: "invoice",
                    amount: try invoice.total(),
                    description: invoice.items.map(\.description).joined(separator: "; "),
                    status: try invoice.status(on: today).rawValue,
                    reference: invoice.reference, due: invoice.due)
            }
        }
        writer.stream.close()
        guard let data = stream.property(forKey: .dataWrittenToMemoryStreamKey) as? Data else {
            throw CofferError(.failed, "Cannot build the CSV export.")
        }
        return data + Data("\n".utf8)
    }
}
