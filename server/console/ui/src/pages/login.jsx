import { useEffect, useState } from 'preact/hooks';
import { request } from '../api.js';
import { go } from '../router.js';
import { ErrorBox } from '../ui.jsx';

// logout forgets the token (JWTs cannot be revoked server-side in 1.4.8).
export function logout() {
  localStorage.removeItem('token');
  go('/login');
}

// why a page sent the user here (the API's 403 message).
const reasons = {
  'token expired!': 'Your session has expired: please log in again.',
  'token invalid!': 'Your login is no longer valid: please log in again.',
  'unknown user!': 'This needs a login.',
  'user not found!': 'Your user no longer exists: log in as another user.',
};

export function Login({ info, next, why }) {
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => { document.title = 'Log in · nacosd'; }, []);

  const submit = async (e) => {
    e.preventDefault();
    // read the form itself: autofill may fill it without input events
    const fd = new FormData(e.target);
    const user = String(fd.get('username') || '');
    const pass = String(fd.get('password') || '');
    setBusy(true);
    setError(null);
    try {
      // As the Java client does: username in the query, password in the body.
      localStorage.removeItem('token');
      const res = await request('POST', 'v1/auth/users/login', { query: { username: user }, form: { password: pass } });
      if (!res || !res.accessToken) throw new Error('The server answered without a token');
      localStorage.setItem('token', JSON.stringify(res));
      const to = next && next !== '/login' ? next : '/configs';
      location.hash = '#' + to;
    } catch (err) {
      setError(err.status === 403 ? new Error('Wrong user name or password') : err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <div class="login">
      <form onSubmit={submit} aria-labelledby="login-title">
        <h1 id="login-title">nacosd</h1>
        <p class="muted">Log in to the console{info && info.version ? ` (Nacos ${info.version} API)` : ''}.</p>
        {info && !info.authEnabled && (
          <p class="alert info">Authentication is off on this server: the console also works without logging in. <a href="#/configs">Continue without logging in</a></p>
        )}
        {info && info.defaultAdminPassword && (
          <p class="alert banner" role="alert" id="default-password-banner">User <strong>nacos</strong> still has the default password <code>nacos</code>: anyone can log in as admin. Change it after logging in (Users), or start nacosd with <code>nacosd.auth.admin-password</code>.</p>
        )}
        {why && !error && <p class="alert info" role="status">{reasons[why] || why}{info && !info.authEnabled && why === 'unknown user!' ? ' Users, roles and permissions need an admin login even with authentication off.' : ''}</p>}
        <ErrorBox error={error} />
        <label class="field">
          <span class="label">User name</span>
          <input name="username" autocomplete="username" autofocus required />
        </label>
        <label class="field">
          <span class="label">Password</span>
          <input name="password" type="password" autocomplete="current-password" required />
        </label>
        <button class="primary wide" type="submit" disabled={busy}>{busy ? 'Logging in…' : 'Log in'}</button>
      </form>
    </div>
  );
}
