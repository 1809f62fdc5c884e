import FinanceCore
import Plot

/// Vault text in the pages Coffer writes (invoices, reports).
enum HTMLText {
    /// Vault text as a text node. Plot escapes `<` and `>` but keeps what looks like an entity
    /// (`&amp;`, `&bogus;`), which would change the text or break the XML: so `&` is escaped
    /// here first, and control characters and XML's non-characters (from a vault written before
    /// they were refused) are replaced.
    static func node<Context>(_ value: String) -> Node<Context> {
        let clean = String(
            String.UnicodeScalarView(
                TextSafety.printable(value).unicodeScalars.map {
                    $0.value == 0xFFFE || $0.value == 0xFFFF ? "\u{FFFD}" : $0
                }))
        return .text(clean.replacingOccurrences(of: "&", with: "&amp;"))
    }
}
