import CofferTestSupport
import Testing

@testable import CofferKit

/// Views are sorted by name with a cheap order checked pair by pair; the result must be the
/// full locale-aware sort's, whatever the names.
@Suite struct SortedByNameTests {
    @Test func equalsTheLocaleAwareSort() {
        let parts = [
            "a", "B", "z", "Z", "é", "É", "e", "1", "10", " ", "-", "_", "ß", "ss", "Ä", "aa", "å", "ø", "Account",
        ]
        var generator = SeededGenerator(state: 5)
        var cheapOrderHeld = 0
        for round in 0..<2_000 {
            let names = (0..<Int.random(in: 0...12, using: &generator)).map { _ in
                (0..<Int.random(in: 1...3, using: &generator)).map { _ in parts.randomElement(using: &generator)! }
                    .joined()
            }
            // Tagged, so two equal names stay two elements whose order shows.
            let elements = names.enumerated().map { (tag: $0.offset, name: $0.element) }
            let expected = elements.sorted { $0.name.localizedCaseInsensitiveCompare($1.name) == .orderedAscending }
            let sorted = sortedByName(elements, \.name)
            #expect(sorted.map(\.tag) == expected.map(\.tag), "round \(round): \(names)")
            let lowercase = elements.sorted { $0.name.lowercased() < $1.name.lowercased() }
            if lowercase.map(\.tag) == expected.map(\.tag) { cheapOrderHeld += 1 }
        }
        #expect(cheapOrderHeld > 100 && cheapOrderHeld < 2_000, "both the cheap path and the full sort must be met")
    }
}
