import Foundation
import GATT
import Scenario
import Signals
import Testing

import struct Scenario.Expectation
import struct Scenario.SourceLocation

/// Valid scenarios parse into exactly the `Scenario` they describe.
@Suite struct ScenarioParserTests {
  func parse(_ yaml: String, file: String = "test.yaml") throws -> Scenario {
    try TestModels.parser.parse(yaml: yaml, file: file)
  }

  func at(_ line: Int, _ column: Int, in file: String = "test.yaml") -> SourceLocation {
    SourceLocation(file: file, line: line, column: column)
  }

  @Test func aMinimalScenarioTakesTheDefaults() throws {
    let scenario = try parse(
      """
      scenario: quick start
      devices:
        - id: ecg
          model: blend-micro
      """, file: "Scenarios/minimal.yaml")
    #expect(scenario.name == "quick start")
    #expect(scenario.description == nil)
    #expect(scenario.seed == 1)
    #expect(scenario.duration == nil)
    #expect(scenario.file == "Scenarios/minimal.yaml")
    #expect(scenario.timeline.isEmpty)
    #expect(scenario.expectations.isEmpty)
    try #require(scenario.devices.count == 1)
    let device = scenario.devices[0]
    #expect(device.id == "ecg")
    #expect(device.model == "blend-micro")
    #expect(device.name == nil)
    #expect(device.serial == nil)
    #expect(device.adapter == nil)
    #expect(device.advertisesAtStart)
    // The parser fills in every declared default: bindings read complete settings.
    #expect(device.settings == ["sample-rate": .number(100), "heart-rate": .number(72)])
    #expect(device.streams.isEmpty)
    #expect(device.client == ["connect-timeout": .duration(.seconds(60)), "reconnect": .flag(true)])
    #expect(device.location == at(3, 5, in: "Scenarios/minimal.yaml"))
    #expect(scenario.device("ecg")?.model == "blend-micro")
    #expect(scenario.device("nope") == nil)
  }

  @Test func topKeysIdentityConfigAndClientSettings() throws {
    let scenario = try parse(
      """
      # Three devices on two adapters.
      scenario: "ward round"
      description: Two devices and a potentiostat.
      duration: 1h30m
      devices:
        - id: ecg
          model: blend-micro
          name: Kardia-7
          adapter: hci1
          advertise: false
          config:
            sample-rate: 250
            heart-rate: 80.5
          client:
            connect-timeout: 30s
            reconnect: false
        - id: left_wrist
          model: e4
          serial: A02BC7
          adapter: 00:AA:01:00:00:23
          config: {battery: 0.5, ibi-warm-up: 0s}
          client: {authentication: refuse}
        - id: pico-2
          model: emstat-pico
          advertise: true
          config:
            technique: swv
            cycles: 3
            firmware: 1.30
            auto-start: true
            interval: 250ms
      seed: 42
      """)
    #expect(scenario.name == "ward round")
    #expect(scenario.description == "Two devices and a potentiostat.")
    #expect(scenario.duration == .seconds(5400))
    #expect(scenario.seed == 42)
    #expect(scenario.devices.map(\.id) == ["ecg", "left_wrist", "pico-2"])
    #expect(scenario.devices.map(\.location) == [at(6, 5), at(17, 5), at(23, 5)])

    let ecg = scenario.devices[0]
    #expect(ecg.model == "blend-micro")
    #expect(ecg.name == "Kardia-7")
    #expect(ecg.serial == nil)
    #expect(ecg.adapter == "hci1")
    #expect(!ecg.advertisesAtStart)
    #expect(ecg.settings == ["sample-rate": .number(250), "heart-rate": .number(80.5)])
    #expect(ecg.client == ["connect-timeout": .duration(.seconds(30)), "reconnect": .flag(false)])

    let wrist = scenario.devices[1]
    #expect(wrist.model == "e4")
    #expect(wrist.name == nil)
    #expect(wrist.serial == "A02BC7")
    #expect(wrist.adapter == "00:AA:01:00:00:23")
    #expect(wrist.advertisesAtStart)
    #expect(wrist.settings == ["battery": .number(0.5), "ibi-warm-up": .duration(.zero)])
    #expect(wrist.client == ["authentication": .text("refuse")])

    let pico = scenario.devices[2]
    #expect(pico.advertisesAtStart)
    #expect(
      pico.settings == [
        "technique": .text("swv"), "cycles": .integer(3), "firmware": .text("1.30"), "auto-start": .flag(true),
        "interval": .duration(.milliseconds(250)),
      ])
    #expect(pico.client.isEmpty)
  }

  @Test func everySourceKind() throws {
    let scenario = try parse(
      """
      scenario: every source
      devices:
        - id: wrist
          model: e4
          streams:
            bvp: {ppg: {heart-rate: 65, variability: 0.05, amplitude: 40, noise: 2, seed: 9}}
            eda:
              eda:
                tonic: 3
                drift: -0.1
                responses:
                  - {at: 30s, amplitude: 0.8}
                  - at: 2m
                spontaneous-rate: 2
                noise: 0.01
                seed: 11
            temperature: {temperature: {start: 32.5, trend: -0.2, wander: 0.05, noise: 0, seed: 12}}
            acc.x: 0.25
            acc.y: {constant: -1}
            acc.z:
              sum:
                - {sine: {amplitude: 0.1, frequency: 2, phase: 1.5, offset: 1}}
                - {noise: {mean: 0.5, sd: 0.02, seed: 7}}
                - 0.125
        - id: wrist-defaults
          model: e4
          streams:
            bvp: {ppg: {heart-rate: 70}}
            eda: {eda: {}}
            temperature: {temperature: {}}
            acc.x: {sine: {amplitude: 1, frequency: 0.5}}
            acc.y: {noise: {sd: 0.1}}
            acc.z: {e4-export: {folder: recordings/session-1, signal: acc.z}}
        - id: ecg
          model: blend-micro
          streams:
            ecg:
              ecg:
                heart-rate: 72
                noise: 0.05
                arrhythmia:
                  - {from: 0s, to: 30s}
                  - {from: 2m, to: 2m30s}
                seed: 3
        - id: ecg-defaults
          model: blend-micro
          streams: {ecg: {ecg: {heart-rate: 60}}}
        - id: replay
          model: blend-micro
          streams:
            ecg: {csv: {file: recordings/ecg.csv, time-column: t, column: mv, interpolation: linear, loop: true}}
        - id: replay-defaults
          model: blend-micro
          streams: {ecg: {csv: {file: ecg.csv, column: value}}}
        - id: ramp
          model: blend-micro
          streams: {ecg: {ramp: {from: 0, to: 1.5, over: 10s}}}
        - id: export
          model: e4
          streams: {bvp: {e4-export: {folder: export, signal: bvp, loop: true}}}
      """)
    let streams = Dictionary(uniqueKeysWithValues: scenario.devices.map { ($0.id, $0.streams) })
    #expect(
      streams["wrist"] == [
        "bvp": .ppg(heartRate: 65, variability: 0.05, amplitude: 40, noise: 2, seed: 9),
        "eda": .eda(
          tonic: 3, drift: -0.1,
          responses: [
            SkinConductanceResponse(onset: 30, amplitude: 0.8), SkinConductanceResponse(onset: 120, amplitude: 0.3),
          ], spontaneousRate: 2, noise: 0.01, seed: 11),
        "temperature": .temperature(start: 32.5, trendPerHour: -0.2, wander: 0.05, noise: 0, seed: 12),
        "acc.x": .constant(0.25),
        "acc.y": .constant(-1),
        "acc.z": .sum([
          .sine(amplitude: 0.1, frequency: 2, phase: 1.5, offset: 1),
          .noise(mean: 0.5, standardDeviation: 0.02, seed: 7),
          .constant(0.125),
        ]),
      ])
    #expect(
      streams["wrist-defaults"] == [
        "bvp": .ppg(heartRate: 70, variability: 0.03, amplitude: 60, noise: 0, seed: nil),
        "eda": .eda(tonic: 2, drift: 0, responses: [], spontaneousRate: 0, noise: 0.005, seed: nil),
        "temperature": .temperature(start: 33, trendPerHour: 0.3, wander: 0.1, noise: 0.01, seed: nil),
        "acc.x": .sine(amplitude: 1, frequency: 0.5, phase: 0, offset: 0),
        "acc.y": .noise(mean: 0, standardDeviation: 0.1, seed: nil),
        "acc.z": .e4Export(folder: "recordings/session-1", signal: "acc.z", loops: false),
      ])
    #expect(streams["ecg"] == ["ecg": .ecg(heartRate: 72, noise: 0.05, arrhythmia: [0...30, 120...150], seed: 3)])
    #expect(streams["ecg-defaults"] == ["ecg": .ecg(heartRate: 60, noise: 0.01, arrhythmia: [], seed: nil)])
    #expect(
      streams["replay"] == [
        "ecg": .csv(
          file: "recordings/ecg.csv", timeColumn: "t", valueColumn: "mv", interpolation: "linear", loops: true)
      ])
    #expect(
      streams["replay-defaults"] == [
        "ecg": .csv(file: "ecg.csv", timeColumn: "time", valueColumn: "value", interpolation: "hold", loops: false)
      ])
    #expect(streams["ramp"] == ["ecg": .ramp(from: 0, to: 1.5, over: .seconds(10))])
    #expect(streams["export"] == ["bvp": .e4Export(folder: "export", signal: "bvp", loops: true)])
  }

  @Test func everyActionAndTrigger() throws {
    let scenario = try parse(
      """
      scenario: every action
      duration: 10m
      devices:
        - {id: ecg, model: blend-micro}
        - {id: wrist, model: e4}
        - {id: pico, model: emstat-pico}
      timeline:
        - {at: 0s, device: ecg, do: stop-advertising}
        - {at: 1s, device: ecg, do: advertise}
        - {at: 2s, device: ecg, do: refuse-connections}
        - {at: 3s, device: ecg, do: accept-connections}
        - after: connected
          device: wrist
          do: disconnect
        - after: subscribed
          delay: 1.5s
          device: wrist
          do: stall
          for: 10s
        - {after: disconnected, delay: 0s, device: wrist, do: stall, for: 2s, drop: true}
        - {at: 4s, device: ecg, do: drop}
        - {at: 5s, device: ecg, do: drop, count: 3}
        - {at: 6s, device: ecg, do: corrupt}
        - {at: 7s, device: ecg, do: corrupt, count: 2}
        - {at: 8s, device: ecg, do: delay-responses, by: 500ms}
        - {at: 9s, device: ecg, do: delay-responses, by: 0s}
        - {at: 10s, device: ecg, do: reject-writes}
        - {at: 11s, device: ecg, do: reject-writes, error: insufficient-authentication, count: 2}
        - {at: 12s, device: ecg, do: accept-writes}
        - {at: 13s, device: ecg, do: set-stream, stream: ecg, source: {sine: {amplitude: 1, frequency: 1}}}
        - {at: 14s, device: wrist, do: set-stream, stream: acc.x, source: 0.5}
        - {at: 15s, device: ecg, do: rename, name: Kardia-2}
        - {at: 16s, device: wrist, do: tag}
        - {at: 17s, device: wrist, do: battery, level: 0.05}
        - {at: 18s, device: wrist, do: power-off}
        - {at: 19s, device: pico, do: press}
        - {at: 20s, device: pico, do: press, times: 3}
        - {at: 10m, do: end}
      """)
    let expected: [(TimelineEvent.Trigger, String?, ScenarioAction)] = [
      (.at(.zero), "ecg", .stopAdvertising),
      (.at(.seconds(1)), "ecg", .advertise),
      (.at(.seconds(2)), "ecg", .acceptConnections(false)),
      (.at(.seconds(3)), "ecg", .acceptConnections(true)),
      (.after(event: "connected", device: "wrist", characteristic: nil, delay: .zero, count: 1), "wrist", .disconnect),
      (
        .after(event: "subscribed", device: "wrist", characteristic: nil, delay: .milliseconds(1500), count: 1),
        "wrist",
        .stall(.seconds(10), drop: false)
      ),
      (
        .after(event: "disconnected", device: "wrist", characteristic: nil, delay: .zero, count: 1), "wrist",
        .stall(.seconds(2), drop: true)
      ),
      (.at(.seconds(4)), "ecg", .drop(count: 1)),
      (.at(.seconds(5)), "ecg", .drop(count: 3)),
      (.at(.seconds(6)), "ecg", .corrupt(count: 1)),
      (.at(.seconds(7)), "ecg", .corrupt(count: 2)),
      (.at(.seconds(8)), "ecg", .delayResponses(by: .milliseconds(500))),
      (.at(.seconds(9)), "ecg", .delayResponses(by: .zero)),
      (.at(.seconds(10)), "ecg", .rejectWrites(error: 0x03, count: nil)),
      (.at(.seconds(11)), "ecg", .rejectWrites(error: 0x05, count: 2)),
      (.at(.seconds(12)), "ecg", .rejectWrites(error: nil, count: nil)),
      (.at(.seconds(13)), "ecg", .setStream("ecg", .sine(amplitude: 1, frequency: 1, phase: 0, offset: 0))),
      (.at(.seconds(14)), "wrist", .setStream("acc.x", .constant(0.5))),
      (.at(.seconds(15)), "ecg", .rename("Kardia-2")),
      (.at(.seconds(16)), "wrist", .device(name: "tag", arguments: [:])),
      (.at(.seconds(17)), "wrist", .device(name: "battery", arguments: ["level": .number(0.05)])),
      (.at(.seconds(18)), "wrist", .device(name: "power-off", arguments: [:])),
      (.at(.seconds(19)), "pico", .device(name: "press", arguments: ["times": .integer(1)])),
      (.at(.seconds(20)), "pico", .device(name: "press", arguments: ["times": .integer(3)])),
      (.at(.seconds(600)), nil, .end),
    ]
    try #require(scenario.timeline.count == expected.count)
    for (event, (trigger, device, action)) in zip(scenario.timeline, expected) {
      #expect(event.trigger == trigger)
      #expect(event.device == device)
      #expect(event.action == action)
    }
    #expect(scenario.timeline[0].location == at(8, 5))
    #expect(scenario.timeline[4].location == at(12, 5))
    #expect(scenario.timeline[5].location == at(15, 5))
    #expect(scenario.timeline.last?.location == at(38, 5))
  }

  @Test func withOneDeviceTheDeviceKeyIsOptional() throws {
    let scenario = try parse(
      """
      scenario: one device
      devices:
        - id: only
          model: blend-micro
      timeline:
        - after: connected
          do: disconnect
        - at: 1m
          do: end
      expect:
        - connected-within: 20s
      """)
    #expect(scenario.timeline.map(\.device) == ["only", "only"])
    #expect(
      scenario.timeline.map(\.trigger) == [
        .after(event: "connected", device: "only", characteristic: nil, delay: .zero, count: 1), .at(.seconds(60)),
      ])
    #expect(scenario.expectations.map(\.device) == ["only"])
    #expect(scenario.expectations.map(\.check) == [.connected(within: .seconds(20))])
  }

  @Test func everyExpectationAndToleranceForm() throws {
    let scenario = try parse(
      """
      scenario: every expectation
      duration: 2m
      devices:
        - id: ecg
          model: blend-micro
        - id: wrist
          model: e4
      expect:
        - device: ecg
          connected-within: 30s
        - device: ecg
          samples:
            stream: ecg
            min-count: 6000
            max-count: 12000
            rate: 100 +- 5%
            min: -2
            max: 2.5
            mean: 0 ± 0.1
        - {device: wrist, samples: {stream: bvp, rate: {value: 64, within: 1}, mean: {value: 0, within: 5%}}}
        - {device: wrist, samples: {stream: eda, min-count: 10, max-gap: 300ms}}
        - {device: wrist, samples: {stream: temperature, max-count: 600}}
        - {device: wrist, samples: {stream: acc.x}}
        - {device: ecg, metric: {name: heart-rate, value: 72 ± 2}}
        - {device: wrist, metric: {name: battery, value: "0.9 ± 10 %"}}
        - {device: ecg, event: {name: arrhythmia}}
        - {device: ecg, event: {name: disconnected, count: 0}}
        - {device: wrist, event: {name: tag, min: 2, max: 3}}
        - {device: wrist, event: {name: ibi, min: 5}}
        - {device: ecg, error: connection refused}
        - {device: wrist, no-errors: true}
      """)
    let expected: [(String, Expectation.Check)] = [
      ("ecg", .connected(within: .seconds(30))),
      (
        "ecg",
        .samples(
          stream: "ecg", count: 6000...12000, rate: Tolerance(100, within: 0.05, relative: true), minimum: -2,
          maximum: 2.5, mean: Tolerance(0, within: 0.1))
      ),
      (
        "wrist",
        .samples(
          stream: "bvp", count: nil, rate: Tolerance(64, within: 1), minimum: nil, maximum: nil,
          mean: Tolerance(0, within: 0.05, relative: true))
      ),
      (
        "wrist",
        .samples(
          stream: "eda", count: 10...Int.max, rate: nil, minimum: nil, maximum: nil, mean: nil,
          maxGap: .milliseconds(300))
      ),
      ("wrist", .samples(stream: "temperature", count: 0...600, rate: nil, minimum: nil, maximum: nil, mean: nil)),
      ("wrist", .samples(stream: "acc.x", count: nil, rate: nil, minimum: nil, maximum: nil, mean: nil)),
      ("ecg", .metric("heart-rate", Tolerance(72, within: 2))),
      ("wrist", .metric("battery", Tolerance(0.9, within: 0.1, relative: true))),
      ("ecg", .event("arrhythmia", count: 1...Int.max)),
      ("ecg", .event("disconnected", count: 0...0)),
      ("wrist", .event("tag", count: 2...3)),
      ("wrist", .event("ibi", count: 5...Int.max)),
      ("ecg", .error(containing: "connection refused")),
      ("wrist", .noErrors),
    ]
    try #require(scenario.expectations.count == expected.count)
    for (expectation, (device, check)) in zip(scenario.expectations, expected) {
      #expect(expectation.device == device)
      #expect(expectation.check == check)
    }
    #expect(scenario.expectations[0].location == at(9, 5))
    #expect(scenario.expectations[1].location == at(11, 5))
    #expect(scenario.expectations[2].location == at(20, 5))
  }

  @Test func tolerancesAcceptWhatTheySay() {
    #expect(Tolerance(72, within: 2).accepts(74))
    #expect(!Tolerance(72, within: 2).accepts(74.5))
    #expect(Tolerance(100, within: 0.05, relative: true).accepts(95))
    #expect(!Tolerance(100, within: 0.05, relative: true).accepts(94))
    #expect(Tolerance(100, within: 0.05, relative: true).description == "100.0 ± 5.0%")
  }

  @Test func durationsReadAndPrintBack() {
    let cases: [(String, Duration)] = [
      ("250ms", .milliseconds(250)), ("1.5s", .milliseconds(1500)), ("2m", .seconds(120)), ("1h", .seconds(3600)),
      ("1h30m", .seconds(5400)), ("24h", .seconds(86_400)), ("10us", .microseconds(10)), ("0s", .zero),
      (" 10s ", .seconds(10)),
    ]
    for (text, duration) in cases {
      #expect(ScenarioDuration.parse(text) == duration, "\(text)")
      #expect(ScenarioDuration.parse(ScenarioDuration.format(duration)) == duration, "\(text)")
    }
    for text in ["", "10", "s", "-1s", "10 s", "1h30", "ten s", "1.2.3s"] {
      #expect(ScenarioDuration.parse(text) == nil, "\(text)")
    }
    #expect(ScenarioDuration.format(.seconds(5400)) == "90m")
    #expect(ScenarioDuration.format(.milliseconds(1500)) == "1.5s")
    #expect(ScenarioDuration.format(.milliseconds(250)) == "250ms")
  }
}
