import FinanceCore
import Plot

/// Vault text in the pages Coffer writes (invoices, reports).
package enum HTMLText {
    /// Vault text as a text node. Plot escapes `<` and `>` but keeps what looks like an entity
    /// (`&amp;`, `&bogus;`), which would change the text or break the XML: so `&` is escaped
    /// here first, and control characters and XML's non-characters (from a vault written before
    /// they were refused) are replaced.
    package static func node<Context>(_ value: String) -> Node<Context> {
        .text(clean(value).replacingOccurrences(of: "&", with: "&amp;"))
    }

    /// Vault or typed text as an attribute's value. Plot writes attribute values as they are
    /// (`name="VALUE"`), so a quote would end the attribute: every character that means
    /// something in markup is escaped here.
    package static func attribute(_ value: String) -> String {
        var escaped = ""
        for character in clean(value) {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    private static func clean(_ value: String) -> String {
        String(
            String.UnicodeScalarView(
                TextSafety.printable(value).unicodeScalars.map {
                    $0.value == 0xFFFE || $0.value == 0xFFFF ? "\u{FFFD}" : $0
                }))
    }
}
