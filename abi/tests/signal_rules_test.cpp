// The signal rules of arbiter_plugin.h as code (arbiter_signal_rules.hpp), which the host
// and the SDK's harness share: each rule refuses with its reason, and evidence must be one
// strict JSON object.
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include <arbiter/arbiter_signal_rules.hpp>

namespace {

using arbiter::signal_rules::evidence_problem;
using arbiter::signal_rules::signal_problem;

struct SignalOf {
    std::string code = "movement.speed";
    std::string evidence;
    arb_signal signal() const {
        return arb_signal{sizeof(arb_signal), 7, 0, 0.5, 0.9, {code.data(), code.size()},
                          {evidence.data(), evidence.size()}};
    }
};

TEST(SignalRules, AGoodSignalPasses) {
    SignalOf good;
    good.evidence = R"({"speed_mps":24.2,"limit":[1,2],"note":"caf\u00e9 ok \ud83d\ude00"})";
    const arb_signal signal = good.signal();
    EXPECT_EQ(signal_problem(&signal), "");
}

TEST(SignalRules, EachNumberAndFieldRuleSaysWhy) {
    SignalOf base;
    arb_signal signal = base.signal();
    EXPECT_EQ(signal_problem(nullptr), "the signal is NULL");
    signal.struct_size = 8;
    EXPECT_NE(signal_problem(&signal).find("struct_size 8 is smaller"), std::string::npos);
    signal = base.signal();
    signal.player = 0;
    EXPECT_EQ(signal_problem(&signal), "player is 0");
    signal = base.signal();
    signal.score = 1.5;
    EXPECT_EQ(signal_problem(&signal), "score 1.5 is outside [0, 1]");
    signal.score = -1e300;
    EXPECT_EQ(signal_problem(&signal), "score -1e+300 is outside [0, 1]");
    signal.score = std::numeric_limits<double>::quiet_NaN();
    EXPECT_EQ(signal_problem(&signal), "score is nan");
    signal = base.signal();
    signal.confidence = std::numeric_limits<double>::infinity();
    EXPECT_EQ(signal_problem(&signal), "confidence is inf");
}

TEST(SignalRules, CodesAreShortLowerCaseNames) {
    for (const std::string code : {"", "Movement.speed", "move speed", "speed\xc3\xa9"}) {
        SignalOf bad;
        bad.code = code;
        const arb_signal signal = bad.signal();
        EXPECT_NE(signal_problem(&signal), "") << code;
    }
    SignalOf longest;
    longest.code = std::string(128, 'a');
    arb_signal signal = longest.signal();
    EXPECT_EQ(signal_problem(&signal), "");
    longest.code += 'a';
    signal = longest.signal();
    EXPECT_EQ(signal_problem(&signal), "code is longer than 128 bytes");
}

TEST(SignalRules, EvidenceIsOneStrictJsonObject) {
    EXPECT_EQ(evidence_problem("{}"), "");
    EXPECT_EQ(evidence_problem(" \t\r\n{ \"a\" : -0.5e-3 , \"b\":[true,false,null,{}] }\n"), "");
    const std::string refused[] = {
        "[]", "\"text\"", "1", "{", "{}{}", "{} x", "{\"a\":1,}", "{\"a\" 1}", "{a:1}",
        "{\"a\":01}", "{\"a\":1.}", "{\"a\":.5}", "{\"a\":1e}", "{\"a\":+1}", "{\"a\":NaN}",
        "{\"a\":tru}", "{\"a\":\"\x01\"}", "{\"a\":\"\\x\"}", "{\"a\":\"\\u12\"}",
        "{\"a\":\"\\ud800\"}", "{\"a\":\"\\udc00\"}", "{\"a\":\"\\ud800\\u0041\"}",
        "{\"a\":\"\xff\"}", "{\"a\":\"\xc0\xaf\"}", "{\"a\":\"\xed\xa0\x80\"}",
        "{\"a\":\"\xf4\x90\x80\x80\"}", "{\"a\":\"\xe2\x82\"}", "{\"a\":1} // note",
        std::string("{\"a\":\"\0\"}", 8)};
    for (const auto& text : refused) EXPECT_NE(evidence_problem(text), "") << text;
}

TEST(SignalRules, EvidenceDepthAndSizeAreBounded) {
    auto nested = [](int depth) {
        std::string text = "{\"a\":";
        for (int i = 1; i < depth; ++i) text += "[";
        text += "1";
        for (int i = 1; i < depth; ++i) text += "]";
        return text + "}";
    };
    EXPECT_EQ(evidence_problem(nested(64)), "");
    EXPECT_NE(evidence_problem(nested(65)).find("deeper than 64"), std::string::npos);
    EXPECT_NE(evidence_problem(nested(30000)).find("deeper than 64"), std::string::npos);
    std::string big = "{\"a\":\"" + std::string(64 * 1024, 'x') + "\"}";
    EXPECT_EQ(evidence_problem(big), "evidence is larger than 64 KiB");
}

}  // namespace
