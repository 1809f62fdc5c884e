import Testing

@testable import CofferKit

/// `CSVRows` replaced CSV.swift's reader for statements (checked against it on 200,000 random
/// texts when it did); these pin what it read, leniencies included, so no statement that
/// imported before reads differently now.
@Suite struct CSVRowsTests {
    static func rows(_ text: String, _ delimiter: Unicode.Scalar = ",") -> [[String]] {
        var rows: [[String]] = []
        CSVRows.forEach(in: text, delimiter: delimiter) { rows.append($0) }
        return rows
    }

    @Test func readsQuotedFieldsLineEndsAndEmptyLines() {
        #expect(Self.rows("") == [])
        #expect(Self.rows("a,b\nc,d") == [["a", "b"], ["c", "d"]])
        #expect(Self.rows("a,b\r\nc,d\r\n") == [["a", "b"], ["c", "d"]], "CRLF is one line end; none after the last")
        #expect(
            Self.rows("a\rb\n\nc") == [["a"], ["b"], [""], ["c"]], "a lone CR ends a row; an empty line is one field")
        #expect(Self.rows("\"a,b\",\"c\nd\",\"say \"\"hi\"\"\"") == [["a,b", "c\nd", "say \"hi\""]])
        #expect(Self.rows("a,\"\"\n") == [["a", ""]])
        #expect(Self.rows("a,b,") == [["a", "b", ""]], "a delimiter at the very end adds an empty field")
        #expect(Self.rows("a,b,\n") == [["a", "b", ""]])
        #expect(Self.rows("x\"y,z") == [["x\"y", "z"]], "a quote inside an unquoted field is kept")
    }

    @Test func keepsCSVSwiftsLeniencies() {
        #expect(
            Self.rows("\"ab\"cd,e\nf\",g") == [["ab\"d,e\nf", "g"]],
            "the quote is kept, the character after it dropped, and the field stays quoted")
        #expect(Self.rows("\"a\"éb,c") == [["a\"b,c"]], "a character outside ASCII is dropped whole")
        #expect(Self.rows("\"open,x\ny") == [["open,x\ny"]], "an unclosed quote runs to the end")
        #expect(Self.rows("\"a\"\r") == [["a"]])
    }

    @Test func splitsAtAnyDelimiterIncludingOneOutsideASCII() {
        #expect(Self.rows("a;b,c\n1;2", ";") == [["a", "b,c"], ["1", "2"]])
        #expect(Self.rows("a\tb", "\t") == [["a", "b"]])
        #expect(Self.rows("a€b€\"c€d\"€é", "€") == [["a", "b", "c€d", "é"]])
        #expect(Self.rows("€", "€") == [["", ""]])
    }
}
