import GATT
import Testing

@Suite struct DrainingBatteryTests {
  @Test func drainsAtTheRateOfEachStretch() {
    var battery = DrainingBattery(level: 1)
    // Half an hour at 0.2 per hour, then a quarter of an hour at 0.8 per hour.
    battery.settle(at: .seconds(1800), perHour: 0.2)
    #expect(abs(battery.level - 0.9) < 1e-9)
    #expect(battery.since == .seconds(1800))
    #expect(abs(battery.level(at: .seconds(2700), perHour: 0.8) - 0.7) < 1e-9)
    // The level stays where it was settled until it is settled again.
    #expect(abs(battery.level - 0.9) < 1e-9)
  }

  @Test func neverGoesBelowEmpty() {
    var battery = DrainingBattery(level: 0.1)
    #expect(battery.level(at: .seconds(3600), perHour: 1) == 0)
    battery.settle(at: .seconds(7200), perHour: 1)
    #expect(battery.level == 0)
  }
}
