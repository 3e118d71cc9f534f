import GATT
import Loopback
import Scenario
import Testing

struct ClientObserverTests {
  @Test func aBatchOfSamplesIsObservedAsTheSamplesOneByOne() async {
    let clock = VirtualClock()
    let single = ClientObserver(clock: clock)
    let batched = ClientObserver(clock: clock)
    let samples: [(value: Double, stream: String, time: Double?)] = [
      (0.1, "acc.x", 1.0), (0.2, "acc.y", 1.0), (0.9, "acc.z", 1.0),
      (0.3, "acc.x", 1.5), (0.1, "acc.y", 1.5), (1.1, "acc.z", 1.5),
    ]
    for (value, stream, time) in samples {
      single.sample(value, stream: stream, device: "wrist", time: time)
    }
    batched.samples(samples, device: "wrist")
    let expected = single.observations["wrist"]?.streams
    let observed = batched.observations["wrist"]?.streams
    #expect(observed == expected)
    #expect(observed?["acc.x"]?.count == 2)
    #expect(observed?["acc.z"]?.maximum == 1.1)
    #expect(observed?["acc.y"]?.largestInterval == 0.5)
  }
}
