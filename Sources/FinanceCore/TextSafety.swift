import Foundation

/// Text in records reaches terminals, spreadsheets, journals and invoices. A control character
/// in it (ESC, BEL, the C1 block) can retitle a terminal, clear it, or hide text, and breaks the
/// XML of an invoice; so every text field of every record is checked on every way in — typed,
/// imported from JSON or CSV — in one place (where every change is written: CofferKit's `FinanceRecord.checkText`),
/// and text shown on a terminal is cleaned again.
public enum TextSafety {
    /// Fields that may hold line breaks and tabs (a postal address, free-form notes, a kept
    /// hledger rules file, the body of a note in the notes vault, an invoice sender's payment
    /// instructions and bank details).
    static let multiLineFields: Set<String> = [
        "address", "notes", "rules file", "note body", "payment instructions", "bank details",
    ]

    /// C0 controls, DEL and C1 controls; line feed and tab only where `multiLine`.
    public static func isForbidden(_ scalar: Unicode.Scalar, multiLine: Bool) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: return !multiLine
        case 0x00...0x1F, 0x7F...0x9F: return true
        default: return false
        }
    }

    /// Refuses `text` if it holds a control character, naming `field`. Line breaks and tabs pass
    /// only in the multi-line fields (a postal address, free-form notes).
    public static func check(field: String, text: String) throws {
        // Printable ASCII holds none (the common case, found a byte at a time).
        if text.isPrintableASCII { return }
        let multiLine = multiLineFields.contains(field)
        guard text.unicodeScalars.contains(where: { isForbidden($0, multiLine: multiLine) }) else { return }
        throw FinanceError(
            .invalidName,
            "The \(field) contains a control character (such as ESC or BEL), which could rewrite a terminal or break an invoice. Nothing was changed."
        )
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
