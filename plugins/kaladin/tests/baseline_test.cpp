// `arbiter baseline` end to end: a simulated corpus of honest players through the built
// executable and plugin writes kaladin's baseline file (and its dated sidecar); kaladin
// loads it and its evidence names the tier's percentile; a damaged file is refused with a
// clear error; a plugin without a baseline path, or with one that cannot be written, is
// an error that names the plugin.
#include <fstream>
#include <iterator>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "run_events.hpp"

namespace arbiter::kaladin::test {
namespace {

std::string exe() {
    return std::string("'") + ARBITER_EXE + "'";
}

void write_text(const std::filesystem::path& path, const std::string& text) {
    std::ofstream(path) << text;
}

std::vector<uint8_t> read_bytes(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string config(const std::string& baseline_line) {
    return std::string("[host]\nlog_level = \"warn\"\n\n[plugins.kaladin]\nlibrary = \"") +
           KALADIN_PLUGIN + "\"\n" + baseline_line +
           "\n[plugins.kaladin.config]\nbaseline_min_samples = 5\n";
}

class Baseline : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = work_dir("baseline");
        std::string out;
        for (int seed : {1, 2})
            ASSERT_EQ(
                run_command(exe() + " simulate '" +
                                (dir_ / ("corpus" + std::to_string(seed) + ".arbev")).string() +
                                "' --seed " + std::to_string(seed) +
                                " --duration-s 90 --players honest=20",
                            out),
                0)
                << out;
    }
    std::string corpus() const {
        return "'" + (dir_ / "corpus1.arbev").string() + "' '" + (dir_ / "corpus2.arbev").string() +
               "'";
    }
    std::filesystem::path dir_;
};

TEST_F(Baseline, WritesTheFileKaladinLoadsAndNames) {
    write_text(dir_ / "c.toml", config("baseline = \"kaladin.baseline\""));
    std::string out;
    ASSERT_EQ(
        run_command(exe() + " baseline '" + (dir_ / "c.toml").string() + "' " + corpus(), out), 0)
        << out;
    EXPECT_NE(out.find("kaladin"), std::string::npos) << out;
    ASSERT_TRUE(std::filesystem::exists(dir_ / "kaladin.baseline"));
    ASSERT_FALSE(std::filesystem::exists(dir_ / "kaladin.baseline.tmp"));
    const auto sidecar = nlohmann::json::parse(std::ifstream(dir_ / "kaladin.baseline.json"));
    EXPECT_EQ(sidecar["plugin"], "kaladin");
    EXPECT_EQ(sidecar["written_utc"].get<std::string>().size(), 20u);
    EXPECT_EQ(sidecar["corpus"].size(), 2u);

    const auto file = BaselineFile::read(read_bytes(dir_ / "kaladin.baseline"));
    EXPECT_EQ(file.matches, 2u);
    EXPECT_EQ(file.tiers.at("*").players, 40u);
    EXPECT_GT(file.tiers.at("*")[Metric::min_cv].samples, 5u);

    // A metronomic script judged against it: the evidence names the baseline percentile.
    ASSERT_EQ(run_command(exe() + " simulate '" + (dir_ / "bots.arbev").string() +
                              "' --seed 9 --duration-s 90 --players metronome=2",
                          out),
              0)
        << out;
    // The harness takes the default config, which asks for 100 samples: the pooled tier
    // of 40 players is too small, so only the test config's 5 lets it through. The
    // executable path is checked with `arbiter replay` below.
    ASSERT_EQ(run_command(exe() + " replay '" + (dir_ / "c.toml").string() + "' '" +
                              (dir_ / "bots.arbev").string() + "' --json",
                          out),
              0)
        << out;
    EXPECT_NE(out.find("\"source\":\"baseline\""), std::string::npos) << out.substr(0, 2000);
    EXPECT_NE(out.find("\"percentile\":0.1"), std::string::npos) << out.substr(0, 2000);
}

// The same corpus file named twice: its batches are duplicates, refused (and said so)
// rather than counted again, so the baseline is the one the file alone gives.
TEST_F(Baseline, AFileNamedTwiceIsCountedOnce) {
    write_text(dir_ / "once.toml", config("baseline = \"once.baseline\""));
    write_text(dir_ / "twice.toml", config("baseline = \"twice.baseline\""));
    const std::string file = "'" + (dir_ / "corpus1.arbev").string() + "'";
    std::string out;
    ASSERT_EQ(run_command(exe() + " baseline '" + (dir_ / "once.toml").string() + "' " + file, out),
              0)
        << out;
    EXPECT_EQ(
        run_command(
            exe() + " baseline '" + (dir_ / "twice.toml").string() + "' " + file + " " + file, out),
        3)
        << "refused batches make a partial run";
    EXPECT_NE(out.find("already delivered"), std::string::npos) << out.substr(0, 2000);
    const auto once = read_bytes(dir_ / "once.baseline");
    ASSERT_FALSE(once.empty());
    EXPECT_EQ(read_bytes(dir_ / "twice.baseline"), once);
    EXPECT_EQ(BaselineFile::read(once).matches, 1u);
}

TEST_F(Baseline, DamagedFileIsRefusedClearly) {
    write_text(dir_ / "c.toml", config("baseline = \"kaladin.baseline\""));
    std::string out;
    ASSERT_EQ(
        run_command(exe() + " baseline '" + (dir_ / "c.toml").string() + "' " + corpus(), out), 0)
        << out;
    auto bytes = read_bytes(dir_ / "kaladin.baseline");
    bytes[bytes.size() / 2] ^= 0x20;
    std::ofstream(dir_ / "kaladin.baseline", std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    EXPECT_NE(run_command(exe() + " replay '" + (dir_ / "c.toml").string() + "' '" +
                              (dir_ / "corpus1.arbev").string() + "'",
                          out),
              0);
    EXPECT_NE(out.find("kaladin refuses its baseline file"), std::string::npos) << out;
    EXPECT_NE(out.find("damaged"), std::string::npos) << out;
}

TEST_F(Baseline, NoPathOrUnwritablePathIsAnError) {
    write_text(dir_ / "none.toml", config(""));
    std::string out;
    EXPECT_EQ(
        run_command(exe() + " baseline '" + (dir_ / "none.toml").string() + "' " + corpus(), out),
        3);
    EXPECT_NE(out.find("has no baseline file"), std::string::npos) << out;

    write_text(dir_ / "bad.toml", config("baseline = \"no/such/folder/kaladin.baseline\""));
    EXPECT_EQ(
        run_command(exe() + " baseline '" + (dir_ / "bad.toml").string() + "' " + corpus(), out),
        3);
    EXPECT_NE(out.find("cannot write"), std::string::npos) << out;

    EXPECT_EQ(run_command(exe() + " baseline '" + (dir_ / "none.toml").string() + "'", out), 1);
}

}  // namespace
}  // namespace arbiter::kaladin::test
