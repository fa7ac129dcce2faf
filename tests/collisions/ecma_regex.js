// Reads a JSON array of [pattern, [subjects...]] from stdin and writes, for each pattern,
// null when RegExp(pattern, "u") is a SyntaxError, else the list of test() results.
"use strict";
let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const out = JSON.parse(input).map(([pattern, subjects]) => {
    let re;
    try {
      re = new RegExp(pattern, "u");
    } catch (e) {
      return null;
    }
    return subjects.map((s) => re.test(s));
  });
  process.stdout.write(JSON.stringify(out));
});
