import Signals
import Testing

/// The one CSV reader: fields with their places, blank lines skipped, any line ending.
struct CSVTableTests {
  @Test func fieldsKeepTheirLineAndColumn() {
    let table = CSVTable("time, mV\r\n\n0.0,  1.5\r0.01,2\n")
    #expect(table.rows.count == 3)
    #expect(table.rows[0].fields.map(\.text) == ["time", "mV"])
    #expect(table.rows[0].fields[1].column == 7)
    #expect(table.rows[1].line == 3)
    #expect(table.rows[1].fields[1].text == "1.5")
    #expect(table.rows[1].fields[1].column == 7)
    #expect(table.rows[2].line == 4)
    #expect(table.rows[2].end == 7)
  }
}
