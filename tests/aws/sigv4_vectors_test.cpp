// The signer against the AWS SigV4 test suite's cases (key AKIDEXAMPLE, 2015-08-30T12:36:00Z,
// us-east-1, service "service", host example.amazonaws.com) and AWS's two S3 header-signing
// examples. The requests are written out here; each expected signature is the one the AWS SDK's
// signer (@smithy/signature-v4) gives for the same request, which for get-vanilla, post-vanilla,
// the query-order, space, slashes, utf8, sts and S3 cases is also the value AWS publishes.
#include <gtest/gtest.h>

#include <string>

#include "aws/sigv4.hpp"

namespace overhead::aws {
namespace {

constexpr std::int64_t kSuiteTime = 1440938160;  // 20150830T123600Z
constexpr std::int64_t kS3DocTime = 1369353600;  // 20130524T000000Z

struct Vector {
  const char* name;
  SignableRequest request;
  std::string session_token;
  const char* signed_headers;
  const char* signature;
};

SigningKeyPair suite_keys(const std::string& token = {}) {
  return {"AKIDEXAMPLE", Secret("wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"), Secret(token)};
}

SignableRequest get(std::string path = "/") { return {"GET", "example.amazonaws.com", std::move(path), {}, {}, {}}; }

const std::string kStsToken =
    "AQoDYXdzEPT//////////wEXAMPLEtc764bNrC9SAPBSM22wDOk4x4HIZ8j4FZTwdQWLWsKWHGBuFqwAeMicRXmxfpSPfIeoIYRqTflfKD8YUuw"
    "thAx7mSEI/qkPpKPi/kMcGdQrmGdeehM4IC1NtBmUpp2wUE8phUZampKsburEDy0KPkyQDYwT7WZ0wq5VSXDvp75YU9HFvlRd8Tx6q6fE8YQcHNV"
    "XAkiY9q6d+xo0rKwT38xVqr7ZD0u0iPPkUL64lIZbqBAz+scqKmlzm8FDrypNC9Yjc8fPOLn9FX9KSYvKTr4rvx3iSIlTJabIQwj2ICCR/oLxBA==";

std::vector<Vector> suite() {
  const std::string unreserved = "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::vector<Vector> v;
  v.push_back({"get-vanilla", get(), "", "host;x-amz-date",
               "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"});
  SignableRequest post = get();
  post.method = "POST";
  v.push_back({"post-vanilla", post, "", "host;x-amz-date",
               "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"});
  SignableRequest q = get();
  q.query = {{"Param2", "value2"}, {"Param1", "value1"}};
  v.push_back({"get-vanilla-query-order-key-case", q, "", "host;x-amz-date",
               "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"});
  SignableRequest trim = get();
  trim.headers = {{"My-Header1", " value1"}, {"My-Header2", " \"a   b   c\""}};
  v.push_back({"get-header-value-trim", trim, "", "host;my-header1;my-header2;x-amz-date",
               "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736"});
  SignableRequest dup = get();
  dup.headers = {{"My-Header1", "value2,value2,value1"}};
  v.push_back({"get-header-key-duplicate", dup, "", "host;my-header1;x-amz-date",
               "c9d5ea9f3f72853aea855b47ea873832890dbdd183b4468f858259531a5138ea"});
  v.push_back({"get-space-normalized", get("/example space/"), "", "host;x-amz-date",
               "652487583200325589f1fba4c7e578f72c47cb61beeca81406b39ddec1366741"});
  v.push_back({"get-slashes-normalized", get("//example//"), "", "host;x-amz-date",
               "9a624bd73a37c9a373b5312afbebe7a714a789de108f0bdfe846570885f57e84"});
  v.push_back({"get-relative-normalized", get("/example/.."), "", "host;x-amz-date",
               "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"});
  v.push_back({"get-slash-dot-slash-normalized", get("/./"), "", "host;x-amz-date",
               "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"});
  v.push_back({"get-unreserved", get("/" + unreserved), "", "host;x-amz-date",
               "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f"});
  v.push_back({"get-utf8", get("/\xE1\x88\xB4"), "", "host;x-amz-date",
               "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85"});
  SignableRequest qu = get();
  qu.query = {{unreserved, unreserved}};
  v.push_back({"get-vanilla-query-unreserved", qu, "", "host;x-amz-date",
               "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197"});
  SignableRequest q8 = get();
  q8.query = {{"\xE1\x88\xB4", "bar"}};
  v.push_back({"get-vanilla-utf8-query", q8, "", "host;x-amz-date",
               "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04"});
  SignableRequest pv = post;
  pv.headers = {{"My-Header1", "VALUE1"}};
  v.push_back({"post-header-value-case", pv, "", "host;my-header1;x-amz-date",
               "cdbc9802e29d2942e5e10b5bccfdd67c5f22c7c4e8ae67b53629efa58b974b7d"});
  SignableRequest form = post;
  form.headers = {{"Content-Type", "application/x-www-form-urlencoded"}};
  form.payload = "Param1=value1";
  v.push_back({"post-x-www-form-urlencoded", form, "", "content-type;host;x-amz-date",
               "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"});
  v.push_back({"post-sts-header-after", post, kStsToken, "host;x-amz-date;x-amz-security-token",
               "85d96828115b5dc0cfc3bd16ad9e210dd772bbebba041836c64533a82be05ead"});
  return v;
}

TEST(SigV4Vectors, SuiteCasesSignAsAwsDoes) {
  for (const Vector& v : suite()) {
    SigningScope scope{"us-east-1", "service", kSuiteTime, false, false};
    SigningTrace trace;
    SignedHeaders h = sign(v.request, suite_keys(v.session_token), scope, &trace);
    EXPECT_EQ(h.authorization, std::string("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/"
                                           "aws4_request, SignedHeaders=") +
                                   v.signed_headers + ", Signature=" + v.signature)
        << v.name << "\ncanonical request:\n" << trace.canonical_request;
    EXPECT_EQ(h.amz_date, "20150830T123600Z");
    EXPECT_EQ(h.security_token, v.session_token) << v.name;
  }
}

TEST(SigV4Vectors, CanonicalRequestOfGetVanillaQuery) {
  SignableRequest q = get();
  q.query = {{"Param2", "value2"}, {"Param1", "value1"}};
  SigningTrace trace;
  sign(q, suite_keys(), {"us-east-1", "service", kSuiteTime, false, false}, &trace);
  EXPECT_EQ(trace.canonical_request,
            "GET\n/\nParam1=value1&Param2=value2\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
            "host;x-amz-date\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(trace.string_to_sign.substr(0, trace.string_to_sign.rfind('\n')),
            "AWS4-HMAC-SHA256\n20150830T123600Z\n20150830/us-east-1/service/aws4_request");
}

// AWS's S3 examples (examplebucket, AKIAIOSFODNN7EXAMPLE): paths are signed as sent, without
// normalisation, and the payload hash travels in x-amz-content-sha256.
TEST(SigV4Vectors, S3ExamplesSignAsAwsDocuments) {
  const SigningKeyPair keys{"AKIAIOSFODNN7EXAMPLE", Secret("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"), Secret()};
  const SigningScope scope{"us-east-1", "s3", kS3DocTime, true, true};

  SignableRequest get_object{"GET", "examplebucket.s3.amazonaws.com", "/test.txt", {}, {{"Range", "bytes=0-9"}}, {}};
  SignedHeaders g = sign(get_object, keys, scope);
  EXPECT_EQ(g.content_sha256, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(g.authorization,
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");

  SignableRequest put_object{"PUT",
                             "examplebucket.s3.amazonaws.com",
                             "/test%24file.text",
                             {},
                             {{"Date", "Fri, 24 May 2013 00:00:00 GMT"}, {"x-amz-storage-class", "REDUCED_REDUNDANCY"}},
                             "Welcome to Amazon S3."};
  SignedHeaders p = sign(put_object, keys, scope);
  EXPECT_EQ(p.content_sha256, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072");
  EXPECT_EQ(p.authorization,
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, "
            "SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class, "
            "Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");
}

TEST(SigV4Vectors, AuthorizationCarriesNoSecret) {
  SignedHeaders h = sign(get(), suite_keys(kStsToken), {"us-east-1", "service", kSuiteTime, false, false});
  EXPECT_EQ(h.authorization.find("wJalrXUtnFEMI"), std::string::npos);
  EXPECT_EQ(h.authorization.find(kStsToken), std::string::npos);
}

TEST(SigV4Vectors, UriEncodingIsRfc3986) {
  EXPECT_EQ(uri_encode("a b+c/d~e*"), "a%20b%2Bc%2Fd~e%2A");
  EXPECT_EQ(uri_encode("a b/c", true), "a%20b/c");
  EXPECT_EQ(encode_query({{"k 1", "v/2"}, {"a", ""}}), "k%201=v%2F2&a=");
  EXPECT_EQ(amz_date(0), "19700101T000000Z");
}

}  // namespace
}  // namespace overhead::aws
