import Foundation

/// Text in records reaches terminals, spreadsheets, journals and invoices. A control character
/// in it (ESC, BEL, the C1 block) can retitle a terminal, clear it, or hide text, and breaks the
/// XML of an invoice; so every text field of every record is checked on every way in — typed,
/// imported from JSON or CSV — in one place (where every change is written), and text shown on
/// a terminal is cleaned again.
public enum TextSafety {
    /// Fields that may hold line breaks and tabs (a postal address, free-form notes).
    static let multiLineFields: Set<String> = ["address", "notes"]

    /// C0 controls, DEL and C1 controls; line feed and tab only where `multiLine`.
    public static func isForbidden(_ scalar: Unicode.Scalar, multiLine: Bool) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: return !multiLine
        case 0x00...0x1F, 0x7F...0x9F: return true
        default: return false
        }
    }

    /// Refuses a record with a control character in any of its text fields, naming the field.
    public static func check(_ record: FinanceRecord) throws {
        for (field, text) in textFields(of: record) where text.unicodeScalars.contains(where: { isForbidden($0, multiLine: multiLineFields.contains(field)) }) {
            throw FinanceError(.invalidName, "The \(field) contains a control character (such as ESC or BEL), which could rewrite a terminal or break an invoice. Nothing was changed.")
        }
    }

    /// Every text field of a record, by field name. A test walks each record kind by reflection
    /// and fails when a text field is missing here, so a field added later cannot slip past.
    public static func textFields(of record: FinanceRecord) -> [(field: String, text: String)] {
        switch record {
        case .settings(let settings): [("currency", settings.currency.code), ("currency", settings.currency.symbol)]
        case .account(let account): [("name", account.name), ("category", account.category)]
        case .update(let update): update.note.map { [("note", $0)] } ?? []
        case .categoryRate(let rate): [("category", rate.category)]
        case .change(let change): [("summary", change.summary)]
        case .backupTarget(let target): [("path", target.path)]
        case .backupState(let state): state.verified.map { ("path", $0.path) }
        case .budgetCategory(let category): [("name", category.name)]
        case .incomeSource(let source): [("name", source.name)]
        case .transaction(let transaction):
            (transaction.note.map { [("note", $0)] } ?? []) + (transaction.origin.map { [("account", $0.account)] } ?? [])
        case .savingsGoal(let goal): [("name", goal.name)]
        case .client(let client):
            [("name", client.name)] + (client.email.map { [("email", $0)] } ?? []) + (client.address.map { [("address", $0)] } ?? [])
        case .invoice(let invoice): invoice.items.map { ("description", $0.description) } + (invoice.notes.map { [("notes", $0)] } ?? [])
        case .invoiceCounter: []
        case .categoryRuleSet(let set): [("name", set.name)] + set.rules.map { ("pattern", $0.pattern) }
        }
    }

    /// `text` with every control character a terminal would act on replaced by U+FFFD (line
    /// breaks and tabs kept), for text that came from an older vault or a file. The exact
    /// sequences in `keeping` (a caller's own colour codes) pass through.
    public static func printable(_ text: String, keeping allowed: [String] = []) -> String {
        guard text.unicodeScalars.contains(where: { isForbidden($0, multiLine: true) }) else { return text }
        let scalars = Array(text.unicodeScalars)
        let allowedScalars = allowed.map { Array($0.unicodeScalars) }
        var output = String.UnicodeScalarView()
        var index = 0
        while index < scalars.count {
            if isForbidden(scalars[index], multiLine: true) {
                if let sequence = allowedScalars.first(where: { scalars[index...].starts(with: $0) }) {
                    output.append(contentsOf: sequence)
                    index += sequence.count
                    continue
                }
                output.append("\u{FFFD}")
            } else {
                output.append(scalars[index])
            }
            index += 1
        }
        return String(output)
    }
}
