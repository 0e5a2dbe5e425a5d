/**
 * What `credential-get` gives a trusted application on cantrip: the model's cloud as
 * `cantrip status` names it (cloud `local`, region `localhost`; the manual provider's
 * models say the same). Juju hands a charm the model's cloud credential; cantrip's
 * providers run agents as local processes (or over ssh for manual machines) and hold no
 * cloud credential at all, so the credential is Juju's `empty` auth type with no
 * attributes — an honest "there is nothing to hand over", in the shape charms parse. The
 * cloud is the controller's own, so `is-controller-cloud` is true.
 */
import type { CloudSpec } from '../hook-tools/hook-context.ts'

export function localCloudSpec (): CloudSpec {
  return { type: 'local', name: 'local', region: 'localhost', credential: { authType: 'empty', attributes: {} }, isControllerCloud: true }
}
