package io.beamsave.pipelines.postgres;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/**
 * CONNINFO split into its password and the rest, as libpq reads it: each expectation here is
 * what libpq 15's PQconninfoParse gives for the same string, and what it gives for the rest is
 * the same minus the password.
 */
class ConninfoTest {

  private static void splits(String conninfo, String rest, String password) {
    Conninfo c = Conninfo.parse(conninfo);
    assertThat(c.withoutPassword()).as(conninfo).isEqualTo(rest);
    assertThat(c.password()).as(conninfo).isEqualTo(password);
    assertThat(c.toString()).as(conninfo).isEqualTo(rest == null ? "" : rest);
  }

  private static void refused(String conninfo, String message) {
    assertThatThrownBy(() -> Conninfo.parse(conninfo)).as(conninfo)
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("--postgres: ").hasMessageContaining(message)
        .hasMessageNotContaining("s3cret").hasMessageNotContaining("\n");
  }

  @Test
  void aPasswordPairIsCutOutAndEveryOtherCharacterKept() {
    splits("host=db.example port=5433 password=s3cret user=backup dbname=app",
        "host=db.example port=5433  user=backup dbname=app", "s3cret");
    splits("password=s3cret host=a", " host=a", "s3cret");
    splits("host=a options='-c statement_timeout=0' password=s3cret application_name='my app'",
        "host=a options='-c statement_timeout=0'  application_name='my app'", "s3cret");
    splits("host=a user=u", "host=a user=u", null);
  }

  @Test
  void quotedValuesHoldSpacesAndBackslashesEscapeInAndOutOfQuotes() {
    splits("host=a password='x y\\'z\\\\' user=u", "host=a  user=u", "x y'z\\");
    splits("host=a password=un\\ quoted\\\\x dbname=d", "host=a  dbname=d", "un quoted\\x");
    splits("host=a password = 'sp ace' dbname=d", "host=a  dbname=d", "sp ace");
    // After a closing quote the next pair may follow at once.
    splits("host='a'password='b'user=u", "host='a'user=u", "b");
    // A backslash that ends the string escapes nothing.
    splits("host=a password=x\\", "host=a ", "x");
  }

  @Test
  void theLastPasswordCountsAndAnEmptyOneIsStillPassedOn() {
    splits("host=a password=p1 dbname=d password=p2", "host=a  dbname=d ", "p2");
    // An empty password stays one: libpq then looks in the password file, as before.
    splits("host=a password='' user=u", "host=a  user=u", "");
    // A value may begin after blanks, so this password is "user=u", to libpq too.
    splits("host=a password= user=u", "host=a ", "user=u");
  }

  @Test
  void aPasswordAloneLeavesNothingForTheCommandLine() {
    splits("password=s3cret", null, "s3cret");
    splits("  password='s3cret'  ", null, "s3cret");
  }

  @Test
  void aUrisPasswordIsPercentDecodedAndCutFromItsUserInfo() {
    splits("postgresql://backup:s%20e%2Fc%3Ar%40t@db.example:5433/app?sslmode=require",
        "postgresql://backup@db.example:5433/app?sslmode=require", "s e/c:r@t");
    splits("postgres://u:s3cret@h", "postgres://u@h", "s3cret");
    splits("postgresql://:s3cret@h/db", "postgresql://@h/db", "s3cret");
    splits("postgresql://u:%C3%A9t%C3%A9@h/db", "postgresql://u@h/db", "\u00e9t\u00e9");
    // Up to the first '@': '?' ends neither the user nor the password.
    splits("postgresql://u:p?x@h/db", "postgresql://u@h/db", "p?x");
    // An empty password is none, to libpq too.
    splits("postgresql://u:@h/db", "postgresql://u:@h/db", null);
    splits("postgresql://u@h1:1,h2:2/db", "postgresql://u@h1:1,h2:2/db", null);
  }

  @Test
  void aUrisPasswordParameterIsCutFromItsQueryAndWinsOverItsUserInfo() {
    splits("postgresql://u:p%40w@h:5/db?password=q&sslmode=disable",
        "postgresql://u@h:5/db?sslmode=disable", "q");
    splits("postgresql://h/db?sslmode=require&password=s3cret&application_name=a%20b",
        "postgresql://h/db?sslmode=require&application_name=a%20b", "s3cret");
    splits("postgresql://h/db?pass%77ord=s%26cret", "postgresql://h/db", "s&cret");
    splits("postgresql://h?password=x&", "postgresql://h", "x");
    splits("postgresql://u:p@h1:1,h2:2/db?password=y", "postgresql://u@h1:1,h2:2/db", "y");
    splits("postgresql://u:p@[::1]:5432/db?password=z", "postgresql://u@[::1]:5432/db", "z");
    // A '?' inside an IPv6 address's brackets does not begin the query.
    splits("postgresql://[::1?x]/db?password=z", "postgresql://[::1?x]/db", "z");
    // No userinfo: the '@' is in the host, and the '?' before it in the user name, to libpq.
    splits("postgresql://host?password=x@y", "postgresql://host?password=x@y", null);
  }

  @Test
  void aDatabaseNameIsNoConnectionString() {
    splits("app", "app", null);
  }

  @Test
  void whatLibpqWouldRefuseIsRefusedWithoutRepeatingIt() {
    refused("host=a password='s3cret", "quoted value that does not end, from character 17");
    refused("host=a password=s3 cret", "no '=' after the word at character 20");
    refused("postgresql://u:s3cret%zz@h/db", "the password in the URI has a '%' that is not");
    refused("postgresql://u:s3cret%00@h/db", "holds %00");
    refused("postgresql://u:s3cret%FF@h/db", "is not UTF-8");
    refused("postgresql://h/db?password=s3cret=x", "a second '=' (write it %3D)");
    refused("postgresql://h/db?password&s3cret", "has no '='");
    refused("postgresql://[::1/db?password=s3cret", "no closing ']'");
    refused("postgresql://[::1]x/db?password=s3cret", "followed by neither");
  }

  @Test
  void aPasswordParameterSpeltOtherwiseIsRefusedBeforeItsValueReachesACommandLine() {
    refused("host=a Password=s3cret", "Password, which libpq does not know: it is written"
        + " password");
    refused("postgresql://h/db?PASSWORD=s3cret", "PASSWORD, which libpq does not know");
  }

  @Test
  void theClientKeysPassphraseIsRefusedForItHasNoWayButTheCommandLine() {
    refused("host=a sslkey=k.pem sslpassword=s3cret", "sslpassword");
    refused("postgresql://h/db?sslpassword=s3cret", "sslpassword");
  }

  @Test
  void aCommandLineShowsThePasswordWhenItHoldsItsParameterAsWritten() {
    byte[] argv = "java\0-jar\0beamsave.jar\0save\0--postgres\0host=a password='x y'\0"
        .getBytes(StandardCharsets.UTF_8);
    assertThat(Conninfo.parse("host=a password='x y'").passwordIn(argv)).isTrue();
    assertThat(Conninfo.parse("host=a password='x z'").passwordIn(argv)).isFalse();
    assertThat(Conninfo.parse("host=a").passwordIn(argv)).isFalse();
    byte[] uri = "beamsave\0--postgres=postgresql://u:p%40w@h/db\0".getBytes(
        StandardCharsets.UTF_8);
    assertThat(Conninfo.parse("postgresql://u:p%40w@h/db").passwordIn(uri)).isTrue();
    assertThat(Conninfo.parse("postgresql://u@h/db?password=p%40w").passwordIn(uri)).isFalse();
  }
}
