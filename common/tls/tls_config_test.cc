#include "common/tls/tls_config.h"

#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "common/tls/bearer_tokens.h"
#include "common/tls/principal.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace stoker {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kToken[] = "0123456789abcdef0123";

// The role of `token` in `file`; nullopt when it is not listed.
std::optional<Role> RoleOf(BearerTokenFile& file, absl::string_view token) {
  std::optional<Principal> principal = file.PrincipalOf(token);
  if (!principal.has_value()) return std::nullopt;
  return principal->role;
}

// A scratch directory removed at the end.
class TlsConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/stoker-tls-config-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { ASSERT_EQ(std::system(("rm -rf " + dir_).c_str()), 0); }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  std::string dir_;
};

TEST_F(TlsConfigTest, NothingSetIsAnErrorNamingTheField) {
  const absl::Status status = TlsConfig().Validate();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("tls.cert_file: no TLS settings"));
  EXPECT_TRUE(TlsConfig::Plaintext().Validate().ok());
  EXPECT_TRUE(TlsConfig::Plaintext().ValidateServing().ok());
}

TEST_F(TlsConfigTest, NamesTheMissingOrContradictingField) {
  TlsConfig config;
  config.cert_file = Write("c.pem", "x");
  config.key_file = Write("c.key", "x");
  EXPECT_THAT(config.Validate().message(), HasSubstr("tls.ca_file: required with TLS"));
  config.ca_file = dir_ + "/missing.pem";
  EXPECT_THAT(config.Validate().message(), HasSubstr("tls.ca_file: cannot read"));
  config.ca_file = Write("ca.pem", "x");
  EXPECT_TRUE(config.Validate().ok());
  config.insecure = true;
  EXPECT_THAT(config.Validate().message(), HasSubstr("tls.insecure: plaintext was asked for"));
}

TEST_F(TlsConfigTest, ATokenClientNeedsNoCertificateButAServerDoes) {
  TlsConfig config;
  config.ca_file = Write("ca.pem", "x");
  config.bearer_token_file = Write("trainer.token", std::string("trainer:") + kToken + "\n");
  EXPECT_TRUE(config.Validate().ok()) << config.Validate();
  EXPECT_THAT(config.ValidateServing().message(), HasSubstr("tls.cert_file: a server"));
  config.bearer_token_file =
      Write("two.token", std::string("trainer:") + kToken + "\nworker:" + kToken);
  EXPECT_THAT(config.Validate().message(), HasSubstr("tls.bearer_token_file: holds 2 tokens"));
  TlsConfig plaintext = TlsConfig::Plaintext();
  plaintext.accept_bearer_tokens_file = config.bearer_token_file;
  EXPECT_THAT(plaintext.Validate().message(),
              HasSubstr("tls.accept_bearer_tokens_file: bearer tokens travel only over TLS"));
}

TEST_F(TlsConfigTest, ParsesTokenFilesAndNeverQuotesALine) {
  absl::StatusOr<std::vector<BearerToken>> tokens = ParseBearerTokens(
      "f", std::string("# comment\n\n worker:") + kToken + " \noperator:" + kToken + "9\n");
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  ASSERT_EQ(tokens->size(), 2u);
  EXPECT_EQ((*tokens)[0].principal.role, Role::kWorker);
  EXPECT_EQ((*tokens)[0].token, kToken);
  EXPECT_EQ((*tokens)[1].principal.role, Role::kOperator);
  const struct {
    std::string text;
    std::string message;
  } bad[] = {
      {std::string("wizard:") + kToken, "f: line 1: unknown role"},
      {"trainer:short-secret", "f: line 1: token shorter than 16"},
      {std::string("# x\n") + kToken, "f: line 2: expected role:token"},
      {std::string("trainer@Team_A:") + kToken, "f: line 1: tenant: a tenant name has only"},
      {std::string("trainer@:") + kToken, "f: line 1: tenant: a tenant name has 1 to 63"},
      {std::string("wizard@a:") + kToken, "f: line 1: unknown role"},
      {std::string("trainer:") + kToken + " more", "f: line 1: token has a space"},
      {"# only a comment\n", "f: no role:token line"},
  };
  for (const auto& [text, message] : bad) {
    const absl::Status status = ParseBearerTokens("f", text).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_THAT(status.message(), HasSubstr(message)) << text;
    EXPECT_THAT(status.message(), Not(HasSubstr("short-secret")));
    EXPECT_THAT(status.message(), Not(HasSubstr(kToken)));
  }
}

TEST_F(TlsConfigTest, TokenLinesNameATenantOrTheDefault) {
  absl::StatusOr<std::vector<BearerToken>> tokens = ParseBearerTokens(
      "f", std::string("trainer@team-a:") + kToken + "\ntrainer:" + kToken + "9\n");
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  ASSERT_EQ(tokens->size(), 2u);
  EXPECT_EQ((*tokens)[0].principal, (Principal{Role::kTrainer, "team-a"}));
  EXPECT_EQ((*tokens)[1].principal, (Principal{Role::kTrainer, "default"}));
  const std::string path = Write("tokens", std::string("trainer@team-a:") + kToken + "\n");
  BearerTokenFile file("f", path, absl::ZeroDuration());
  EXPECT_EQ(file.PrincipalOf(kToken), (Principal{Role::kTrainer, "team-a"}));
}

TEST(PrincipalTest, UrisNameARoleAndATenant) {
  EXPECT_EQ(PrincipalUri({Role::kTrainer, "default"}), "spiffe://stoker/role/trainer");
  EXPECT_EQ(PrincipalUri({Role::kTrainer, "a"}), "spiffe://stoker/tenant/a/role/trainer");
  EXPECT_EQ(PrincipalFromUri("spiffe://stoker/role/worker"), (Principal{Role::kWorker, "default"}));
  EXPECT_EQ(PrincipalFromUri("spiffe://stoker/tenant/team-b/role/trainer"),
            (Principal{Role::kTrainer, "team-b"}));
  for (const char* not_ours :
       {"spiffe://stoker/role/wizard", "spiffe://stoker/tenant/a/role/", "spiffe://stoker/tenant/a",
        "spiffe://stoker/tenant/A/role/trainer", "spiffe://stoker/tenant/default/role/trainer",
        "spiffe://stoker/tenant//role/trainer", "spiffe://other/role/trainer",
        "spiffe://stoker/tenant/a/b/role/trainer"}) {
    EXPECT_EQ(PrincipalFromUri(not_ours), std::nullopt) << not_ours;
  }
}

TEST(PrincipalTest, ACertificateNamesExactlyOnePrincipal) {
  EXPECT_EQ(PrincipalFromUris({"https://x", "spiffe://stoker/tenant/a/role/trainer"}).value(),
            (Principal{Role::kTrainer, "a"}));
  EXPECT_EQ(PrincipalFromUris({"https://x"}).status().code(), absl::StatusCode::kUnauthenticated);
  const absl::Status two = PrincipalFromUris({"spiffe://stoker/tenant/a/role/trainer",
                                              "spiffe://stoker/tenant/b/role/trainer"})
                               .status();
  EXPECT_EQ(two.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(two.message(), HasSubstr("trainer@a, trainer@b"));
}

TEST(PrincipalTest, TrainersSeeTheirTenantOtherRolesAndPlaintextSeeAll) {
  const TenantScope trainer = TenantScope::Of(Principal{Role::kTrainer, "a"});
  EXPECT_TRUE(trainer.Sees("a"));
  EXPECT_FALSE(trainer.Sees("b"));
  EXPECT_FALSE(trainer.Sees("default"));
  EXPECT_EQ(trainer.tenant, "a");
  const TenantScope op = TenantScope::Of(Principal{Role::kOperator, "a"});
  EXPECT_TRUE(op.Sees("b"));
  const TenantScope plaintext = TenantScope::Of(std::nullopt);
  EXPECT_TRUE(plaintext.Sees("b"));
  EXPECT_EQ(plaintext.tenant, "default");
  EXPECT_FALSE(TenantScope::Only("b").Sees("a"));
}

TEST(PrincipalTest, TenantNamesAreDnsLabels) {
  EXPECT_TRUE(CheckTenantName("t", "team-7").ok());
  EXPECT_TRUE(CheckTenantName("t", std::string(63, 'a')).ok());
  for (const std::string& bad : {std::string(""), std::string(64, 'a'), std::string("-a"),
                                 std::string("a-"), std::string("A"), std::string("a.b")}) {
    const absl::Status status = CheckTenantName("tenants[0]", bad);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(status.message(), HasSubstr("tenants[0]: a tenant name")) << bad;
  }
}

TEST_F(TlsConfigTest, ComparesTokensExactly) {
  EXPECT_TRUE(ConstantTimeEquals(kToken, kToken));
  EXPECT_FALSE(ConstantTimeEquals(kToken, std::string(kToken) + "x"));
  EXPECT_FALSE(ConstantTimeEquals(std::string(kToken) + "x", kToken));
  EXPECT_FALSE(ConstantTimeEquals("", kToken));
  EXPECT_FALSE(ConstantTimeEquals("0123456789abcdef0124", kToken));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
}

TEST_F(TlsConfigTest, TokenFileIsReReadWhenItChanges) {
  const std::string path = Write("tokens", std::string("trainer:") + kToken + "\n");
  BearerTokenFile file("f", path, absl::ZeroDuration());
  EXPECT_EQ(RoleOf(file, kToken), Role::kTrainer);
  EXPECT_EQ(RoleOf(file, "0123456789abcdef0124"), std::nullopt);
  EXPECT_EQ(file.OwnToken(), kToken);
  // Replaced by rename, as Kubernetes Secrets and cert-manager do.
  const std::string next = Write("next", "worker:0123456789abcdef0124\n");
  ASSERT_EQ(rename(next.c_str(), path.c_str()), 0);
  EXPECT_EQ(RoleOf(file, kToken), std::nullopt);
  EXPECT_EQ(RoleOf(file, "0123456789abcdef0124"), Role::kWorker);
  // A version that does not parse keeps the last good tokens.
  const std::string broken = Write("broken", "nonsense\n");
  ASSERT_EQ(rename(broken.c_str(), path.c_str()), 0);
  EXPECT_EQ(RoleOf(file, "0123456789abcdef0124"), Role::kWorker);
}

TEST_F(TlsConfigTest, TokenFileIsRecheckedOnlyOnceTheRecheckIntervalPassed) {
  const std::string path = Write("tokens", std::string("trainer:") + kToken + "\n");
  FakeClock clock;
  BearerTokenFile file("f", path, absl::Seconds(10), &clock);
  const std::string next = Write("next", "worker:0123456789abcdef0124\n");
  ASSERT_EQ(rename(next.c_str(), path.c_str()), 0);
  clock.Advance(absl::Seconds(9));
  EXPECT_EQ(RoleOf(file, kToken), Role::kTrainer);  // not looked at yet
  clock.Advance(absl::Seconds(1));
  EXPECT_EQ(RoleOf(file, kToken), std::nullopt);
  EXPECT_EQ(RoleOf(file, "0123456789abcdef0124"), Role::kWorker);
}

}  // namespace
}  // namespace stoker
