export type { Life, ResolvedMode, RemoteCharm, RemoteRelation, RemoteStorage, RemoteAction, RemoteCommand, RemoteState } from '../../runtime/unit-remote-state.ts'
import type { RemoteState } from '../../runtime/unit-remote-state.ts'

export function initialRemoteState (charmUrl: string): RemoteState {
  return {
    life: 'alive',
    resolvedMode: 'none',
    charm: { url: charmUrl, modifiedVersion: 0, forceUpgrade: false },
    configHash: '',
    trustHash: '',
    addressesHash: '',
    leader: false,
    leaderSettingsVersion: 1,
    relations: {},
    storage: {},
    storageRequiredForInstall: [],
    actions: [],
    commands: [],
    subordinates: []
  }
}
