// histor-sign interop check: verify one Sigstore bundle with sigstore-js (@sigstore/verify)
// against a given TrustedRoot, pinning the certificate identity and issuer.
//   node sigstore_js_verify.cjs BUNDLE ARTIFACT|- TRUSTED_ROOT IDENTITY ISSUER
// ARTIFACT is the signed file for a message-signature bundle; "-" for a DSSE bundle, whose
// payload is inside. Prints one line, "verified" or "rejected: <reason>"; exit 0 or 1.
'use strict';
const fs = require('node:fs');
const { bundleFromJSON } = require('@sigstore/bundle');
const { TrustedRoot } = require('@sigstore/protobuf-specs');
const { Verifier, toSignedEntity, toTrustMaterial } = require('@sigstore/verify');

function main(argv) {
  if (argv.length !== 5) {
    console.log('usage: sigstore_js_verify.cjs BUNDLE ARTIFACT|- TRUSTED_ROOT IDENTITY ISSUER');
    return 2;
  }
  const [bundleFile, artifactFile, rootFile, identity, issuer] = argv;
  const readJSON = (file) => JSON.parse(fs.readFileSync(file, 'utf8'));
  try {
    const bundle = bundleFromJSON(readJSON(bundleFile));
    const artifact = artifactFile === '-' ? undefined : fs.readFileSync(artifactFile);
    const material = toTrustMaterial(TrustedRoot.fromJSON(readJSON(rootFile)));
    const verifier = new Verifier(material, { tlogThreshold: 1, ctlogThreshold: 1 });
    verifier.verify(toSignedEntity(bundle, artifact), {
      subjectAlternativeName: identity,
      extensions: { issuer },
    });
  } catch (err) {
    const reason = `${err.code || err.name || 'Error'}: ${err.message}`.split('\n')[0];
    console.log(`rejected: ${reason}`);
    return 1;
  }
  console.log('verified');
  return 0;
}

process.exitCode = main(process.argv.slice(2));
