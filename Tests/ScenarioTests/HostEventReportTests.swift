import GATT
import Testing

@testable import Scenario

/// An outage of the hosting stack is reported as what it is — host events
/// beside the expectations — in JUnit and in the HTML report.
@Suite struct HostEventReportTests {
  static func report() -> ScenarioReport {
    var activity = CentralActivity()
    activity.hostEvents = [(12.5, .stackLost), (15.25, .registeredAgain(after: .milliseconds(2750)))]
    return ScenarioReport(
      scenario: "outage", file: "outage.yaml", elapsed: .seconds(30), wallTime: .seconds(30), observations: [:],
      activity: ["board": activity], faults: [:], results: [], firedEvents: [])
  }

  @Test func junitListsHostEventsAsPropertiesOfTheSuite() {
    let xml = JUnitReport.xml([Self.report()])
    #expect(xml.contains(#"<property name="host-event" value="12.500 s board: bluetoothd went away"/>"#))
    #expect(
      xml.contains(
        #"<property name="host-event" value="15.250 s board: bluetoothd is back: registered again 2.8 s after the loss"/>"#
      ))
    #expect(xml.contains(#"failures="0""#))
  }

  @Test func theHTMLReportListsThemToo() {
    let page = HTMLReport.page([Self.report()], title: "outage")
    #expect(page.contains("<h3>Host events</h3>"))
    #expect(page.contains("<li>12.500 s board: bluetoothd went away</li>"))
  }
}
