/** Every CLI command, in help order. Each file registers one command (or a few close ones). */
import type { RegisterCommand } from '../cli-context.ts'
import { registerBootstrap } from './bootstrap.ts'
import { registerControllers } from './controllers.ts'
import { registerDestroyController } from './destroy-controller.ts'
// status commands (helper: status)
// model commands (helper: model commands)

export const commands: RegisterCommand[] = [
  registerBootstrap,
  registerControllers,
  registerDestroyController
  // status commands
  // model commands
]
