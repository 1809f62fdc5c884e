import CofferTestSupport
import Foundation
import Testing

/// `coffer web` in a real browser (Tests/Browser/web_flows.py): headless Chromium through
/// Selenium drives the everyday flows and compares each change with the CLI's, then axe-core
/// checks every page at phone and desktop width in both colour schemes. Screenshots go to
/// COFFER_SCREENSHOTS (else .build/screenshots). scripts/setup installs Chromium, its driver,
/// Selenium and axe-selenium-python; without them this test fails, it never skips.
@Suite struct WebBrowserTests {
    @Test func everydayFlowsAndAccessibilityInChromium() throws {
        let (status, output) = try Sandbox().runPythonScript("Browser/web_flows.py")
        #expect(status == 0, "\(output)")
        #expect(output.contains("all passed"), "\(output)")
    }
}
