// Properties: Java's .properties syntax (separators, comments, continuations,
// escapes), and PropertyResolver's environment overrides and ${} substitution
// with its loop guard — the good forms and the malformed ones.
#include "canal/common/properties.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include <unistd.h>

#include <gtest/gtest.h>

namespace canal {
namespace {

Properties MustParse(std::string_view text) {
  Properties p;
  Status s = Properties::Parse(text, "test.properties", &p);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return p;
}

std::string Value(const Properties& p, std::string_view key) {
  const std::string* v = p.Find(key);
  return v ? *v : std::string("<unset>");
}

EnvLookup FakeEnv(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(PropertiesParse, AcceptsEqualsColonAndBlankSeparators) {
  Properties p = MustParse("a=1\nb: 2\nc 3\nd   =   4\ne\t:\t5\nf=\ng\n");
  EXPECT_EQ(Value(p, "a"), "1");
  EXPECT_EQ(Value(p, "b"), "2");
  EXPECT_EQ(Value(p, "c"), "3");
  EXPECT_EQ(Value(p, "d"), "4");
  EXPECT_EQ(Value(p, "e"), "5");
  EXPECT_EQ(Value(p, "f"), "");
  EXPECT_EQ(Value(p, "g"), "");  // a key alone has an empty value
}

TEST(PropertiesParse, OnlyTheFirstSeparatorSplits) {
  Properties p = MustParse("url=jdbc:mysql://h:3306/db?a=b\nk:v=w\n");
  EXPECT_EQ(Value(p, "url"), "jdbc:mysql://h:3306/db?a=b");
  EXPECT_EQ(Value(p, "k"), "v=w");
}

TEST(PropertiesParse, SkipsHashAndBangCommentsAndBlankLines) {
  Properties p = MustParse("# a comment\n   ! another\n\n   \t\nkey=value # not a comment\n");
  EXPECT_EQ(p.keys(), std::vector<std::string>{"key"});
  EXPECT_EQ(Value(p, "key"), "value # not a comment");
}

TEST(PropertiesParse, TrimsTrailingBlanksButKeepsEscapedOnes) {
  Properties p = MustParse("a = spaced   \nb = kept\\ \n");
  EXPECT_EQ(Value(p, "a"), "spaced");
  EXPECT_EQ(Value(p, "b"), "kept ");
}

TEST(PropertiesParse, JoinsContinuationLinesDroppingLeadingBlanks) {
  Properties p = MustParse("list = a,\\\n        b,\\\n\tc\nnext=1\n");
  EXPECT_EQ(Value(p, "list"), "a,b,c");
  EXPECT_EQ(Value(p, "next"), "1");
  EXPECT_EQ(p.LineOf("list"), 1);
  EXPECT_EQ(p.LineOf("next"), 4);
}

TEST(PropertiesParse, AnEvenNumberOfBackslashesDoesNotContinue) {
  Properties p = MustParse("path=C:\\\\dir\\\\\nother=x\n");
  EXPECT_EQ(Value(p, "path"), "C:\\dir\\");
  EXPECT_EQ(Value(p, "other"), "x");
}

TEST(PropertiesParse, AContinuationAtTheEndOfTheFileEndsTheValue) {
  Properties p = MustParse("a=1\\");
  EXPECT_EQ(Value(p, "a"), "1");
}

TEST(PropertiesParse, ACommentLineEndingInABackslashDoesNotContinue) {
  Properties p = MustParse("# comment \\\nkey=v\n");
  EXPECT_EQ(Value(p, "key"), "v");
}

TEST(PropertiesParse, DecodesEscapes) {
  Properties p = MustParse("t=a\\tb\\nc\\rd\\fe\nregex=.*\\\\..*\nother=\\q\\=\\:\n");
  EXPECT_EQ(Value(p, "t"), "a\tb\nc\rd\fe");
  EXPECT_EQ(Value(p, "regex"), ".*\\..*");  // what Canal's filter regex sees
  EXPECT_EQ(Value(p, "other"), "q=:");
}

TEST(PropertiesParse, EscapedSeparatorsBelongToTheKey) {
  Properties p = MustParse("a\\=b\\:c\\ d=value\n");
  EXPECT_EQ(Value(p, "a=b:c d"), "value");
}

TEST(PropertiesParse, DecodesUnicodeEscapesToUtf8) {
  Properties p = MustParse("a=\\u00e9\\u4e2d\nb=\\uD83D\\uDE00\nc=\\u0041x\n");
  EXPECT_EQ(Value(p, "a"), "\xC3\xA9\xE4\xB8\xAD");
  EXPECT_EQ(Value(p, "b"), "\xF0\x9F\x98\x80");
  EXPECT_EQ(Value(p, "c"), "Ax");
}

TEST(PropertiesParse, RefusesMalformedUnicodeEscapesNamingFileAndLine) {
  for (std::string_view text : {"ok=1\nbad=\\u12G4\n", "ok=1\nbad=\\u12\n", "ok=1\nbad=\\uD800x\n",
                                "ok=1\nbad=\\uDC00\n", "ok=1\nbad=\\uD800\\u0041\n"}) {
    Properties p;
    Status s = Properties::Parse(text, "conf/x.properties", &p);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
    EXPECT_NE(s.message().find("conf/x.properties:2"), std::string::npos) << s.ToString();
  }
}

TEST(PropertiesParse, AcceptsCrLfAndCrLineEnds) {
  Properties p = MustParse("a=1\r\nb=2\rc=3\r\n");
  EXPECT_EQ(Value(p, "a"), "1");
  EXPECT_EQ(Value(p, "b"), "2");
  EXPECT_EQ(Value(p, "c"), "3");
}

TEST(PropertiesParse, ALaterLineReplacesAnEarlierOne) {
  Properties p = MustParse("k=1\nk=2\n");
  EXPECT_EQ(Value(p, "k"), "2");
  EXPECT_EQ(p.keys().size(), 1u);
  EXPECT_EQ(p.LineOf("k"), 2);
}

TEST(PropertiesParse, EmptyTextHasNoKeys) {
  Properties p = MustParse("");
  EXPECT_TRUE(p.empty());
  p = MustParse("\n\n# only comments\n");
  EXPECT_TRUE(p.empty());
}

TEST(PropertiesParse, BinaryGarbageNeitherCrashesNorReadsOutOfBounds) {
  std::string text;
  for (int i = 0; i < 4096; ++i) text.push_back(static_cast<char>((i * 7919) & 0xFF));
  text += "\\";
  Properties p;
  Status s = Properties::Parse(text, "garbage", &p);
  s.PermitUncheckedError();  // any outcome but a crash will do
}

TEST(PropertiesLoadFile, ReadsAFileAndReportsAMissingOne) {
  const std::string path = ::testing::TempDir() + "props_test_" + std::to_string(::getpid()) + ".properties";
  {
    std::ofstream out(path);
    out << "canal.port = 11111\n";
  }
  Properties p;
  ASSERT_TRUE(Properties::LoadFile(path, &p).ok());
  EXPECT_EQ(Value(p, "canal.port"), "11111");
  EXPECT_EQ(p.origin(), path);
  std::remove(path.c_str());
  Status s = Properties::LoadFile(path, &p);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(s.message().find(path), std::string::npos);
}

TEST(EnvOverrideName, UpperCasesAndTurnsPunctuationIntoUnderscores) {
  EXPECT_EQ(EnvOverrideName("canal.instance.master.address"), "CANAL_INSTANCE_MASTER_ADDRESS");
  EXPECT_EQ(EnvOverrideName("canal.instance.dbUsername"), "CANAL_INSTANCE_DBUSERNAME");
  EXPECT_EQ(EnvOverrideName("a-b.c9"), "A_B_C9");
}

TEST(PropertyResolver, FirstLayerWinsAndUnsetIsNullopt) {
  Properties instance = MustParse("k=instance\n");
  Properties global = MustParse("k=global\nonly.global=g\n");
  PropertyResolver r({&instance, &global}, FakeEnv({}));
  std::optional<std::string> v;
  PropertySource source;
  ASSERT_TRUE(r.Get("k", &v, &source).ok());
  EXPECT_EQ(v, "instance");
  EXPECT_EQ(source.where, "test.properties:1");
  ASSERT_TRUE(r.Get("only.global", &v).ok());
  EXPECT_EQ(v, "g");
  ASSERT_TRUE(r.Get("missing", &v).ok());
  EXPECT_FALSE(v.has_value());
  EXPECT_FALSE(r.Has("missing"));
}

TEST(PropertyResolver, EnvironmentOverridesFilesByExactOrUpperCaseName) {
  Properties file = MustParse("canal.instance.master.address=file:3306\ncanal.port=1\n");
  PropertyResolver upper({&file}, FakeEnv({{"CANAL_INSTANCE_MASTER_ADDRESS", "env:3306"}}));
  std::optional<std::string> v;
  PropertySource source;
  ASSERT_TRUE(upper.Get("canal.instance.master.address", &v, &source).ok());
  EXPECT_EQ(v, "env:3306");
  EXPECT_TRUE(source.from_environment);
  EXPECT_EQ(source.where, "environment variable CANAL_INSTANCE_MASTER_ADDRESS");
  ASSERT_TRUE(upper.Get("canal.port", &v).ok());
  EXPECT_EQ(v, "1");

  // Canal's own form (the exact key) wins over the upper-case one.
  PropertyResolver both({&file}, FakeEnv({{"canal.port", "2"}, {"CANAL_PORT", "3"}}));
  ASSERT_TRUE(both.Get("canal.port", &v).ok());
  EXPECT_EQ(v, "2");

  // An override needs no key in any file, and an empty variable counts.
  PropertyResolver empty({&file}, FakeEnv({{"CANAL_USER", ""}, {"CANAL_NEW", " x "}}));
  ASSERT_TRUE(empty.Get("canal.user", &v).ok());
  EXPECT_EQ(v, "");
  ASSERT_TRUE(empty.Get("canal.new", &v).ok());
  EXPECT_EQ(v, "x");
}

TEST(PropertyResolver, SubstitutesOtherKeysAcrossLayersThenTheEnvironment) {
  Properties instance = MustParse("dir=${canal.conf.dir}/data\nhome.dir=${HOME}/x\nmixed=a${b}c${b}\n");
  Properties global = MustParse("canal.conf.dir=../conf\nb=B\n");
  PropertyResolver r({&instance, &global}, FakeEnv({{"HOME", "/home/c"}}));
  std::optional<std::string> v;
  ASSERT_TRUE(r.Get("dir", &v).ok());
  EXPECT_EQ(v, "../conf/data");
  ASSERT_TRUE(r.Get("home.dir", &v).ok());
  EXPECT_EQ(v, "/home/c/x");
  ASSERT_TRUE(r.Get("mixed", &v).ok());
  EXPECT_EQ(v, "aBcB");
}

TEST(PropertyResolver, SubstitutionSeesEnvironmentOverridesAndNestsAndDefaults) {
  Properties p = MustParse("a=${b}\nb=${c}!\nc=file\nd=${nothing:fallback}\ne=${c:unused}\nf=$${c} and $5\n");
  PropertyResolver r({&p}, FakeEnv({{"C", "env"}}));
  std::optional<std::string> v;
  ASSERT_TRUE(r.Get("a", &v).ok());
  EXPECT_EQ(v, "env!");
  ASSERT_TRUE(r.Get("d", &v).ok());
  EXPECT_EQ(v, "fallback");
  ASSERT_TRUE(r.Get("e", &v).ok());
  EXPECT_EQ(v, "env");
  ASSERT_TRUE(r.Get("f", &v).ok());
  EXPECT_EQ(v, "${c} and $5");
}

TEST(PropertyResolver, RefusesASubstitutionLoopNamingTheChain) {
  Properties p = MustParse("a=${b}\nb=${c}\nc=x${a}\nself=${self}\n");
  PropertyResolver r({&p}, FakeEnv({}));
  std::optional<std::string> v;
  Status s = r.Get("a", &v);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("a -> b -> c -> a"), std::string::npos) << s.ToString();
  s = r.Get("self", &v);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("loop"), std::string::npos) << s.ToString();
}

TEST(PropertyResolver, RefusesUnknownUnclosedAndEmptyNamesNamingFileAndKey) {
  Properties p = MustParse("x=1\nunknown=${nope}\nunclosed=${x\nempty=${}\n");
  PropertyResolver r({&p}, FakeEnv({}));
  std::optional<std::string> v;
  Status s = r.Get("unknown", &v);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("test.properties:2: unknown = '${nope}'"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("nope"), std::string::npos);
  s = r.Get("unclosed", &v);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("test.properties:3"), std::string::npos) << s.ToString();
  s = r.Get("empty", &v);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("test.properties:4"), std::string::npos) << s.ToString();
}

TEST(PropertyResolver, ReadsTheProcessEnvironmentByDefault) {
  ::setenv("CANAL_PROPERTIES_TEST_KEY", "from-env", 1);
  Properties p = MustParse("canal.properties.test.key=file\n");
  PropertyResolver r({&p});
  std::optional<std::string> v;
  ASSERT_TRUE(r.Get("canal.properties.test.key", &v).ok());
  EXPECT_EQ(v, "from-env");
  ::unsetenv("CANAL_PROPERTIES_TEST_KEY");
  ASSERT_TRUE(r.Get("canal.properties.test.key", &v).ok());
  EXPECT_EQ(v, "file");
}

}  // namespace
}  // namespace canal
