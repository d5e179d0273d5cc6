/** The extension's own notifications about the server: each one at most once until cleared. */
import * as vscode from 'vscode';

export interface NotificationAction {
  title: string;
  run: () => void;
}

export class OnceNotifier {
  private readonly shown = new Set<string>();

  /** Shows `message` unless one with `key` was shown already; runs the action the user picks. */
  async notify(key: string, kind: 'error' | 'warning', message: string, ...actions: NotificationAction[]): Promise<void> {
    if (this.shown.has(key)) {
      return;
    }
    this.shown.add(key);
    const show = kind === 'error' ? vscode.window.showErrorMessage : vscode.window.showWarningMessage;
    const picked = await show(message, ...actions.map((a) => a.title));
    actions.find((a) => a.title === picked)?.run();
  }

  /** Lets every notification be shown again (the setting it was about changed). */
  clear(): void {
    this.shown.clear();
  }
}
